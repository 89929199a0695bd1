/// \file
/// Processes (Erlang style): a process is a coroutine with a mailbox. It talks to other
/// processes only by messages, ends alone, and can be linked, monitored and supervised.
///
/// ```
/// saturn::process<int> doubler(saturn::pid_of<int> reply_to) {
///   auto self = co_await saturn::this_process;        // self_ref<int>
///   for (;;) {
///     int v = co_await self.receive();                  // the oldest message
///     if (v < 0) co_return;
///     saturn::send(reply_to, 2 * v);
///   }
/// }
/// saturn::pid_of<int> p = saturn::spawn_process(doubler, me);   // see spawn.hpp
/// ```
///
/// Costs: a process is its coroutine frame (its promise is ~100 bytes plus the body's
/// locals) and a 32-byte pid-table slot; a message is one node allocation and one CAS.
#pragma once

#include <saturn/proc/detail/process_promise.hpp>
#include <saturn/proc/detail/receive.hpp>

#include <chrono>
#include <optional>
#include <utility>

namespace saturn {

/// The return type of a process body: `process<Msg> body(args...)` is a coroutine whose
/// mailbox holds Msg (use a std::variant for several kinds). Lazy: nothing runs until it
/// is spawned (spawn_process). Move-only; destroying an unspawned one frees it.
template <class Msg>
class [[nodiscard]] process {
 public:
  using promise_type = detail::process_promise<Msg>;
  using message_type = Msg;

  process() noexcept = default;
  explicit process(std::coroutine_handle<promise_type> h) noexcept : m_h(h) {}
  process(process&& o) noexcept : m_h(std::exchange(o.m_h, {})) {}
  process& operator=(process&& o) noexcept {
    if (this != &o) {
      if (m_h)
        m_h.destroy();
      m_h = std::exchange(o.m_h, {});
    }
    return *this;
  }
  ~process() {
    if (m_h)
      m_h.destroy();
  }

  /// Gives up the coroutine (spawn_process takes it).
  std::coroutine_handle<promise_type> release() noexcept { return std::exchange(m_h, {}); }

 private:
  std::coroutine_handle<promise_type> m_h{};
};

/// A process's handle on itself: its mailbox, its pid, its links and monitors.
///
/// Threading: use it only inside the process it came from (from its body, or from tasks
/// the body awaits); never store it elsewhere. The receive awaitables suspend the process
/// until a message arrives; they are not cancelled by stop tokens (use receive_for).
template <class Msg>
class self_ref {
 public:
  explicit self_ref(detail::process_promise<Msg>* p) noexcept : m_p(p) {}

  /// This process's pid.
  pid_of<Msg> pid() const noexcept { return pid_of<Msg>::unchecked(m_p->m_self); }

  /// Awaits the oldest message. Throws process_exit if an exit signal ends the process.
  auto receive() noexcept { return detail::receive_awaiter<Msg, detail::accept_any, false>(m_p, {}); }

  /// Awaits the oldest message for which `pred(const Msg&)` is true; the others stay in
  /// the mailbox in their order, for later receives.
  /// g++ 12: a lambda with by-copy captures written in the operand (`co_await
  /// self.receive([name](const Msg&) {...})`, name a std::string) is destroyed twice (a
  /// double free); make it a named local first (`auto is_for = [name](...) {...};
  /// co_await self.receive(is_for);`). Captures by reference or of trivial types are fine.
  template <class Pred>
  auto receive(Pred pred) {
    return detail::receive_awaiter<Msg, Pred, false>(m_p, std::move(pred));
  }

  /// Like receive(), but gives std::nullopt if no message came within `timeout`. Needs a
  /// loop on the calling thread (a runtime, or a thread_pool in io mode).
  auto receive_for(std::chrono::nanoseconds timeout) noexcept {
    return detail::receive_awaiter<Msg, detail::accept_any, true>(m_p, {}, clock::now() + timeout);
  }
  /// Selective receive with a time-out (g++ 12: name a capturing `pred`, as for receive).
  template <class Pred>
  auto receive_for(std::chrono::nanoseconds timeout, Pred pred) {
    return detail::receive_awaiter<Msg, Pred, true>(m_p, std::move(pred), clock::now() + timeout);
  }

  /// When `on`, exit signals from linked processes arrive as exit_message (Msg must be
  /// constructible from it) instead of ending this process. kill() is never trapped.
  void trap_exits(bool on = true) noexcept {
    static_assert(std::is_constructible_v<Msg, exit_message>,
                  "trap_exits needs a message type constructible from saturn::exit_message");
    m_p->m_trap = on;
  }

  /// Links this process with `other`: when either ends abnormally the other ends too
  /// (or, trapping exits, gets an exit_message). If `other` has already ended, this
  /// process gets an exit signal with reason noproc. Idempotent.
  void link(saturn::pid other) { detail::link_pids(m_p->m_self, other); }
  /// Removes the link with `other`, if any.
  void unlink(saturn::pid other) noexcept { detail::unlink_pids(m_p->m_self, other); }

  /// Monitors `target`: exactly one down_message (Msg must be constructible from it)
  /// arrives when it ends — with reason noproc if it already has.
  monitor_ref monitor(saturn::pid target) {
    static_assert(std::is_constructible_v<Msg, down_message>,
                  "monitor needs a message type constructible from saturn::down_message");
    return detail::monitor_pid(m_p->m_self, target);
  }
  /// Cancels a monitor of `target`.
  void demonitor(saturn::pid target, monitor_ref ref) noexcept { detail::demonitor_pid(target, ref); }

 private:
  detail::process_promise<Msg>* m_p;
};

/// `co_await saturn::receive()` in a process body: the oldest message (like
/// self_ref::receive(), without a self_ref in the frame).
inline detail::receive_tag<detail::accept_any> receive() noexcept { return {}; }
/// `co_await saturn::receive(pred)`: selective receive (like self_ref::receive(pred); with
/// g++ 12 name a `pred` that captures by copy, as there).
template <class Pred>
detail::receive_tag<Pred> receive(Pred pred) {
  return {std::move(pred)};
}

/// \cond DETAIL
namespace detail {
template <class Msg>
process<Msg> process_promise<Msg>::get_return_object() noexcept {
  return process<Msg>(std::coroutine_handle<process_promise>::from_promise(*this));
}
template <class Msg>
self_ref<Msg> process_promise<Msg>::self_awaiter::await_resume() const noexcept {
  return self_ref<Msg>(m_p);
}
}  // namespace detail
/// \endcond

}  // namespace saturn
