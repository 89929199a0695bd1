/// \file
/// `multishot_source`: one multishot operation (a receive into provided buffers, or an
/// accept) kept armed on one loop, with a queue of the CQEs its consumer has not taken yet.
///
/// Protocol (all of it on the owner loop's thread — the loop where it was first awaited):
///   * The consumer takes items one at a time (`ms_await`). If an item is queued it gets
///     it at once (no suspension); otherwise it registers as the waiter and the next CQE
///     goes straight to it. A consumer running on another worker (its task was stolen)
///     hops: its await posts itself to the owner loop and is completed from there.
///   * Receive: the buffer of the item handed out last is recycled when the consumer
///     takes the next one (or closes), so the span it got stays valid until then.
///   * Pause: when `limit` items wait in the queue (the consumer lags: a slow reader
///     upstream), the operation is cancelled; the socket's own buffer and TCP flow
///     control then push back on the sender. It is re-armed once the queue is drained.
///   * -ENOBUFS (the loop's buffer ring ran dry) ends the operation. The ring is shared by
///     every connection of the loop, and connections whose peers do not read hold their
///     buffers, so the consumer must not wait for one to come back: when it waits with an
///     empty queue, one plain recv into a spare buffer of the source's own (ring buffer
///     size, freed when the consumer takes the next item) takes the pending bytes, and the
///     next wait re-arms the multishot receive. Only one operation is in flight at a time
///     and each starts after the previous one's final CQE, so no byte is lost or reordered.
///   * close() may be called from any thread; the source then recycles what it holds,
///     cancels the operation and frees itself on the final CQE.
///   * If the loop is destroyed first (a socket outliving its runtime), the loop's exit
///     hook orphans the source: what it queued is dropped (the ring goes with the loop)
///     and a later await binds it afresh to the awaiting thread's loop.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/ext/buf_ring.hpp>
#include <saturn/ext/exit_hook.hpp>
#include <saturn/ext/operation.hpp>
#include <saturn/loop/event_loop.hpp>
#include <saturn/task/detail/cancellable.hpp>
#include <saturn/task/detail/promise_base.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <system_error>
#include <vector>

namespace saturn::net::detail {

/// Item flag (not a kernel CQE flag): the bytes are in the source's spare buffer.
inline constexpr unsigned ms_f_spare = 1u << 14;
/// Item flag (not a kernel CQE flag): the wait's read timeout ended it (res -ETIMEDOUT).
inline constexpr unsigned ms_f_timeout = 1u << 13;

/// One CQE as the consumer sees it.
struct ms_item {
  int res = 0;
  unsigned flags = 0;
};

class ms_await;

/// See the file comment. Allocated with new; freed by close() (eventually on its loop).
class multishot_source final : public operation, private loop_exit_hook {
 public:
  enum class kind : std::uint8_t { recv, accept };

  /// `limit`: queued items at which the multishot operation pauses (cancelled, re-armed
  /// once the consumer has taken half); a receive's bounds its buffers, an accept's its fds.
  multishot_source(kind k, int fd, unsigned limit) noexcept;

  /// The loop this source lives on, binding it to `cur` on first use.
  event_loop* bind_owner(event_loop* cur) noexcept;
  event_loop* owner() const noexcept { return m_owner; }
  /// Owner thread: an item now (recycling the previous receive buffer), or false.
  bool try_take(ms_item& out) noexcept;
  /// Owner thread: registers the consumer for the next item.
  void set_waiter(ms_await* w) noexcept { m_waiter = w; }
  /// Owner thread: drops a registered consumer (its await was cancelled).
  void remove_waiter(ms_await* w) noexcept {
    if (m_waiter == w)
      m_waiter = nullptr;
  }
  /// The receive buffers (owner's buf_ring); valid after bind_owner for kind::recv.
  buf_ring* buffers() const noexcept { return m_bufs; }
  /// The spare receive buffer an item with ms_f_spare points into.
  const std::byte* spare() const noexcept { return m_spare.get(); }
  /// Items queued and not taken (for tests and diagnostics).
  unsigned queued() const noexcept { return m_count; }
  /// True while a pause (cancel for backpressure) is in effect (for tests).
  bool paused() const noexcept { return m_paused; }
  /// Ends the source; any thread. The object frees itself (maybe later, on its loop).
  void close() noexcept;
  /// Times a receive ended with -ENOBUFS (the ring ran dry), process-wide (tests, diagnostics).
  static std::uint64_t ring_dry_events() noexcept { return s_dry.load(std::memory_order_relaxed); }

 private:
  ~multishot_source();
  static void on_cqe(operation* op, int res, unsigned flags) noexcept;
  static void on_close_posted(runnable* r, run_mode mode) noexcept;
  static void on_loop_exit(loop_exit_hook* h) noexcept;
  void close_on_owner() noexcept;
  void arm(bool poll_first) noexcept;
  void arm_spare() noexcept;
  void push(ms_item it);
  ms_item pop() noexcept;
  void hand_out(ms_item it) noexcept;
  void drop(ms_item it) noexcept;

  static inline saturn::detail::atomic<std::uint64_t> s_dry{0};
  event_loop* m_owner = nullptr;
  buf_ring* m_bufs = nullptr;
  ms_await* m_waiter = nullptr;
  std::vector<ms_item> m_queue;  // circular: m_head, m_count
  unsigned m_head = 0;
  unsigned m_count = 0;
  unsigned m_limit;
  int m_fd;
  int m_setup_error = 0;
  std::int32_t m_held = -1;  // receive buffer handed out last, recycled on the next take
  std::unique_ptr<std::byte[]> m_spare;  // the ring ran dry: a recv lands here (see above)
  kind m_kind;
  bool m_armed = false;
  bool m_paused = false;
  bool m_eof = false;
  bool m_closing = false;
  bool m_spare_recv = false;  // the operation in flight is the recv into m_spare
  bool m_spare_held = false;  // the item handed out last is in m_spare
  struct close_node : runnable {
    multishot_source* self = nullptr;
  } m_close_node;
};

/// Awaits the next item of a multishot_source; cancellable through the task's stop token
/// (the wait ends with -ECANCELED, the operation itself stays armed). With `timeout` > 0 a
/// wait that gets no item within it ends with -ETIMEDOUT (flag ms_f_timeout): a loop timer
/// on the owner loop drops the waiter; the operation stays armed and keeps what arrives.
class ms_await : public saturn::detail::cancellable<ms_await> {
 public:
  explicit ms_await(multishot_source* src, std::chrono::milliseconds timeout = {}) noexcept
      : m_src(src), m_timeout(timeout) {}
  ms_await(const ms_await&) = delete;
  ms_await& operator=(const ms_await&) = delete;

  bool await_ready() noexcept {
    event_loop* cur = event_loop::current();
    return cur != nullptr && m_src->bind_owner(cur) == cur && m_src->try_take(m_item);
  }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    static_assert(saturn::detail::saturn_promise<P>, "await from a saturn::task");
    return suspend(&h.promise());
  }
  ms_item await_resume() noexcept { return take_item(); }
  ms_item take_item() noexcept {
    this->disarm_cancellation();
    return m_item;
  }

  /// Called by the source on its loop thread with the item for this consumer.
  void deliver(ms_item it) noexcept;
  /// cancellable: on the owner loop thread.
  void cancel_now() noexcept;

 protected:
  multishot_source* m_src;
  ms_item m_item{};

 private:
  bool suspend(saturn::detail::promise_base* p) noexcept;
  bool suspend_on_owner() noexcept;
  static void run_hop(runnable* r, run_mode mode) noexcept;
  static void on_timer(timer_node* t, run_mode mode) noexcept;
  void disarm_timer() noexcept {
    if (m_timer.armed())
      m_src->owner()->cancel_timer(&m_timer);
  }
  saturn::detail::promise_base* m_waiting = nullptr;
  std::chrono::milliseconds m_timeout;
  struct wait_timer : timer_node {
    ms_await* self = nullptr;
  } m_timer;
  struct hop_node : runnable {
    ms_await* self = nullptr;
  } m_hop;
};

}  // namespace saturn::net::detail
