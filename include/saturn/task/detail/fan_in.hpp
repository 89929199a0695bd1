/// \file
/// `fan_in`: the scope behind when_all and when_any — N children started together, one
/// parent resumed when the last of them has ended.
///
/// Protocol:
///   start   the parent stores its handle, sets m_pending = N + 1 and queues the N drivers
///           (scheduler::spawn). The extra 1 is the parent's own: no child can resume the
///           parent while it is still queueing. It then drops its 1; if that was the last
///           reference (every child already ended, possible on other workers) it does not
///           suspend at all.
///   child   a child ends → its driver's final suspend calls on_done: if the child is
///           "decisive" (when_all: it failed; when_any: it finished) and the first such,
///           its index is recorded and the scope's stop source is stopped, cancelling the
///           others. Then the driver drops its reference; whoever drops the last one
///           resumes the parent by symmetric transfer, on its own thread.
///   end     the parent reads m_first and the children's promises. Every child has ended
///           by then, so losers' in-flight I/O has completed (a cancelled await resumes only
///           after the kernel's final CQE).
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/task/detail/child_driver.hpp>
#include <saturn/task/detail/stop_scope.hpp>

#include <array>
#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

namespace saturn::detail {

class fan_in final : public child_scope {
 public:
  static constexpr std::size_t npos = ~std::size_t{0};

  /// Which child ending stops the others.
  enum class stop_when : std::uint8_t {
    first_failure,     ///< when_all: the first child that ends with an exception
    first_completion,  ///< when_any: the first child that ends at all
  };

  /// Threading: construct in the scope's coroutine, on its thread.
  fan_in(const task_context& parent, stop_when policy) : m_stop(parent), m_policy(policy) {
    m_on_child_done = &on_done;
  }
  fan_in(const fan_in&) = delete;
  fan_in& operator=(const fan_in&) = delete;

  /// Wraps `child` (owned by the caller, which must keep it until the scope ends) into a
  /// driver reporting here as child number `index`. Throws std::invalid_argument for an
  /// empty task.
  template <class T>
  child_driver adopt(task<T>& child, std::size_t index, const char* who) {
    if (!child)
      throw std::invalid_argument(std::string(who) +
                                  ": an empty task (moved-from or default-constructed) was passed; pass tasks "
                                  "returned by coroutine calls");
    auto h = child.handle();
    child_driver d = drive_borrowed<T>(h);
    d.bind(*this, index, h.promise(), m_stop.context());
    return d;
  }

  struct start_awaiter {
    fan_in* m_self;
    std::span<child_driver> m_drivers;
    bool await_ready() const noexcept { return m_drivers.empty(); }
    bool await_suspend(std::coroutine_handle<> parent) noexcept {
      fan_in& s = *m_self;
      s.m_parent = parent;
      s.m_pending.store(m_drivers.size() + 1, std::memory_order_relaxed);
      scheduler* sched = s.m_stop.context().sched;
      for (child_driver& d : m_drivers)
        sched->spawn(&d.promise());
      // lifetime: until this decrement the parent holds a reference, so no child can
      // resume it (and end this frame) while the loop above still reads it.
      // ordering: acq_rel: if we drop the last reference, acquire sees every child's
      // outcome; otherwise release is harmless.
      return s.m_pending.fetch_sub(1, std::memory_order_acq_rel) != 1;
    }
    void await_resume() const noexcept {}
  };
  /// Starts every driver and suspends until all children have ended. Await once.
  start_awaiter run_all(std::span<child_driver> drivers) noexcept { return start_awaiter{this, drivers}; }

  /// After run_all: index of the decisive child (see stop_when), or npos.
  std::size_t first() const noexcept { return m_first.load(std::memory_order_relaxed); }
  /// After run_all with first_failure: rethrows the first failure, if any.
  void rethrow_first_failure() const {
    if (m_first_error)
      std::rethrow_exception(m_first_error);
  }

 private:
  static std::coroutine_handle<> on_done(child_scope* scope, std::coroutine_handle<child_promise> driver) noexcept {
    auto* self = static_cast<fan_in*>(scope);
    const child_promise& p = driver.promise();
    const bool failed = p.m_child->has_failed();
    if (failed || self->m_policy == stop_when::first_completion) {
      std::size_t expected = npos;
      // ordering: relaxed: m_first and m_first_error are read by the parent only after
      // the m_pending hand-off below, which orders them.
      if (self->m_first.compare_exchange_strong(expected, p.m_index, std::memory_order_relaxed)) {
        if (failed)
          self->m_first_error = p.child_error();
        self->m_stop.request_stop();  // runs the other children's stop callbacks here
      }
    }
    // ordering: acq_rel: release publishes this child's outcome; the last one to drop
    // its reference acquires every other child's (release sequence on m_pending).
    if (self->m_pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
      return self->m_parent;
    return std::noop_coroutine();
  }

  stop_scope m_stop;
  saturn::detail::atomic<std::size_t> m_pending{0};
  saturn::detail::atomic<std::size_t> m_first{npos};
  std::exception_ptr m_first_error;
  std::coroutine_handle<> m_parent;
  stop_when m_policy;
};

/// Adopts each of `children` as child number I (its position in the pack).
template <std::size_t... I, class... Ts>
std::array<child_driver, sizeof...(Ts)> adopt_all([[maybe_unused]] fan_in& scope, [[maybe_unused]] const char* who,
                                                  std::index_sequence<I...>, task<Ts>&... children) {
  return {scope.adopt(children, I, who)...};
}

}  // namespace saturn::detail
