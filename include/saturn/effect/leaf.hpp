/// \file
/// Leaf effects: the loop's operations as effects. The operation state *is* the io_uring
/// `operation` (its address is the SQE's user_data) or the loop `timer_node`, so a leaf in
/// a pipeline costs what the operation costs through tier A, minus the callback's pool
/// allocation when the state lives in a frame.
///
/// Every leaf needs a loop (env.loop: set by co_await, start(effect, loop, fn) and block
/// helpers). A stop requested on env.token before start completes the leaf with
/// operation_canceled without submitting; during the operation it submits ASYNC_CANCEL
/// (timers are disarmed) and the leaf completes on the operation's final CQE, so buffers
/// stay in use until the kernel is done with them.
#pragma once

#include <saturn/ext/submit.hpp>
#include <saturn/effect/core.hpp>
#include <saturn/effect/detail/stop_link.hpp>
#include <saturn/loop/event_loop.hpp>

#include <sys/uio.h>

#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <span>

namespace saturn::effect {
namespace detail {

/// A ring operation described by Kind: `value_type`, `name`, `submit(loop, op)` and
/// `value(res)` (or `deliver_value(r, res)`); Kind lives in the state (timespecs, iovecs).
template <class Kind, class R>
class ring_op final : operation, stop_link<ring_op<Kind, R>> {
  friend class stop_link<ring_op>;

 public:
  ring_op(Kind k, R r) : m_kind(std::move(k)), m_r(std::move(r)) { m_complete = &on_complete; }
  ring_op(const ring_op&) = delete;
  ring_op& operator=(const ring_op&) = delete;

  void start() noexcept {
    const env e = m_r.get_env();
    assert(e.loop != nullptr && "a leaf effect needs an event loop: start it with co_await, start() or block_on");
    if (e.stop_requested()) {
      m_r.set_error(failure::canceled(Kind::name));
      return;
    }
    m_kind.submit(*e.loop, this);
    this->arm(e.loop, e);
  }

 private:
  static void on_complete(operation* op, int res, unsigned) noexcept {
    auto* self = static_cast<ring_op*>(op);
    self->m_res = res;
    if (self->complete_may_deliver())
      self->deliver();
  }
  void cancel_now() noexcept { ext::submit_cancel(*this->m_loop, this); }
  void deliver() noexcept {
    this->disarm();
    int res = Kind::normalize(m_res);
    if (res < 0) {
      m_r.set_error(errno_error(res, Kind::name));
      return;
    }
    if constexpr (std::is_void_v<typename Kind::value_type>)
      m_r.set_value();
    else
      m_r.set_value(m_kind.value(res));
  }

  Kind m_kind;
  R m_r;
  int m_res = 0;
};

/// The effect wrapper of a Kind.
template <class Kind>
struct ring_effect : effect_base<ring_effect<Kind>> {
  using value_type = typename Kind::value_type;
  static constexpr bool completes_inline = false;
  Kind m_kind;
  explicit ring_effect(Kind k) : m_kind(std::move(k)) {}
  template <class R>
  ring_op<Kind, R> connect(R r) && {
    return ring_op<Kind, R>(std::move(m_kind), std::move(r));
  }
};

struct nop_kind {
  using value_type = void;
  static constexpr const char* name = "nop";
  static int normalize(int res) noexcept { return res; }
  void submit(event_loop& l, operation* op) const { ext::submit_nop(l, op); }
};

struct rw_kind {
  using value_type = std::size_t;
  static constexpr const char* name = "read/write";
  int fd;
  void* buf;
  unsigned len;
  std::uint64_t offset;
  bool write;
  static int normalize(int res) noexcept { return res; }
  void submit(event_loop& l, operation* op) const {
    if (write)
      ext::submit_write(l, op, fd, buf, len, offset);
    else
      ext::submit_read(l, op, fd, buf, len, offset);
  }
  std::size_t value(int res) const noexcept { return static_cast<std::size_t>(res); }
};
struct read_kind : rw_kind {
  static constexpr const char* name = "read";
};
struct write_kind : rw_kind {
  static constexpr const char* name = "write";
};

struct timeout_kind {
  using value_type = void;
  static constexpr const char* name = "timeout";
  kernel_timespec ts;  // lifetime: in the operation state, which outlives the SQE
  static int normalize(int res) noexcept { return res == -ETIME ? 0 : res; }  // expiry is success
  void submit(event_loop& l, operation* op) const { ext::submit_timeout(l, op, &ts); }
};

struct close_kind {
  using value_type = void;
  static constexpr const char* name = "close";
  int fd;
  static int normalize(int res) noexcept { return res; }
  void submit(event_loop& l, operation* op) const { ext::submit_close(l, op, fd); }
};

// ---------------------------------------------------------------- loop timers

/// A loop timer (no kernel object). On expiry: set_value() — or, for a deadline
/// (`Expire` = true), set_error(timed_out). A stop disarms it and completes with
/// operation_canceled, delivered from the loop's run queue (never inside request_stop).
template <class V, bool Expire, class R>
class timer_op final : timer_node, stop_link<timer_op<V, Expire, R>> {
  friend class stop_link<timer_op>;

 public:
  timer_op(std::chrono::nanoseconds d, R r) : m_delay(d), m_r(std::move(r)) { m_fire = &on_fire; }
  timer_op(const timer_op&) = delete;
  timer_op& operator=(const timer_op&) = delete;

  void start() noexcept {
    const env e = m_r.get_env();
    assert(e.loop != nullptr && "a timer effect needs an event loop: start it with co_await, start() or block_on");
    if (e.stop_requested()) {
      m_r.set_error(failure::canceled(Expire ? "with_timeout" : "sleep"));
      return;
    }
    e.loop->add_timer(this, clock::now() + m_delay);
    this->arm(e.loop, e);
  }

 private:
  static void on_fire(timer_node* t, run_mode mode) noexcept {
    auto* self = static_cast<timer_op*>(t);
    if (mode == run_mode::run && self->complete_may_deliver())
      self->deliver();
  }
  static void on_canceled(runnable* r, run_mode mode) noexcept {
    if (mode == run_mode::run)
      static_cast<cancel_node*>(r)->self->deliver();
  }
  void cancel_now() noexcept {
    if (this->m_loop->cancel_timer(this)) {
      m_canceled = true;
      m_node.self = this;
      m_node.m_fn = &on_canceled;
      this->m_loop->post(&m_node);
    }
  }
  void deliver() noexcept {
    this->disarm();
    if (m_canceled)
      m_r.set_error(failure::canceled(Expire ? "with_timeout" : "sleep"));
    else if constexpr (Expire)
      m_r.set_error(error{std::make_error_code(std::errc::timed_out), "with_timeout"});
    else
      m_r.set_value();
  }
  struct cancel_node : runnable {
    timer_op* self = nullptr;
  };

  std::chrono::nanoseconds m_delay;
  R m_r;
  cancel_node m_node;
  bool m_canceled = false;
};

/// A loop timer as an effect (value type V; V is void unless it is a deadline).
template <class V, bool Expire>
struct timer_effect : effect_base<timer_effect<V, Expire>> {
  using value_type = V;
  static constexpr bool completes_inline = false;
  std::chrono::nanoseconds m_delay;
  explicit timer_effect(std::chrono::nanoseconds d) : m_delay(d) {}
  template <class R>
  timer_op<V, Expire, R> connect(R r) && {
    return timer_op<V, Expire, R>(m_delay, std::move(r));
  }
};

}  // namespace detail

/// IORING_OP_NOP: a round trip through the ring; completes with no value.
inline detail::ring_effect<detail::nop_kind> nop() noexcept { return detail::ring_effect<detail::nop_kind>({}); }

/// read(2) into `buf` at `offset` (-1: the file position): the byte count, 0 at EOF.
/// `buf` must stay alive until the effect completes.
inline detail::ring_effect<detail::read_kind> read(int fd, std::span<std::byte> buf,
                                                   std::uint64_t offset = ~std::uint64_t{0}) noexcept {
  return detail::ring_effect<detail::read_kind>(
      detail::read_kind{{fd, buf.data(), static_cast<unsigned>(buf.size()), offset, false}});
}
/// write(2) of `buf` at `offset` (-1: the file position): the byte count.
inline detail::ring_effect<detail::write_kind> write(int fd, std::span<const std::byte> buf,
                                                     std::uint64_t offset = ~std::uint64_t{0}) noexcept {
  return detail::ring_effect<detail::write_kind>(detail::write_kind{
      {fd, const_cast<std::byte*>(buf.data()), static_cast<unsigned>(buf.size()), offset, true}});
}
/// A kernel timeout (IORING_OP_TIMEOUT): completes with no value when it expires.
inline detail::ring_effect<detail::timeout_kind> kernel_timeout(std::chrono::nanoseconds d) noexcept {
  return detail::ring_effect<detail::timeout_kind>(detail::timeout_kind{kernel_timespec::from(d)});
}
/// close(2) through the ring.
inline detail::ring_effect<detail::close_kind> close(int fd) noexcept {
  return detail::ring_effect<detail::close_kind>(detail::close_kind{fd});
}
/// A loop timer: completes with no value after at least `d` (never earlier).
inline detail::timer_effect<void, false> sleep_for(std::chrono::nanoseconds d) noexcept {
  return detail::timer_effect<void, false>(d);
}

}  // namespace saturn::effect
