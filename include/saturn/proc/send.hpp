/// \file
/// Sending messages: send (never waits), send_wait (waits for room in a bounded mailbox),
/// alive, kill.
#pragma once

#include <saturn/proc/detail/signals.hpp>
#include <saturn/proc/detail/slot_table.hpp>
#include <saturn/task/task.hpp>

#include <utility>

namespace saturn {

/// Sends `msg` to `to`. Returns true if the process was alive when the message was put
/// in its mailbox, false (and the message is dropped) if it had ended — a defined no-op,
/// as in Erlang. Messages from one sender to one receiver arrive in send order.
/// Threading: any thread, in or out of a process; never blocks, never suspends; one node
/// allocation and one CAS (plus a wake-up if the receiver was parked in receive). To a
/// bounded mailbox it does not wait, but the message is counted against the bound.
template <class Msg, class U>
bool send(pid_of<Msg> to, U&& msg) {
  static_assert(std::is_constructible_v<Msg, U&&>, "send: the message does not convert to the process's type");
  detail::slot* s = detail::slot_at(to.index);
  if (s == nullptr)
    return false;
  auto* n = new detail::msg_node<Msg>(std::forward<U>(msg));
  // ordering: relaxed: the flag was set before the pid was published.
  if (s->m_flags.load(std::memory_order_relaxed) & detail::slot_bounded) [[unlikely]]
    detail::bounded_count(to);
  if (detail::inbox_push(to, n)) [[likely]]
    return true;
  delete n;
  return false;
}

/// True while the process named by `p` has not ended (it may end right after). Any thread.
inline bool alive(pid p) noexcept { return detail::pid_alive(p); }

/// Sends `p` an exit signal: it ends at its next receive, with `reason`. kill() with
/// exit_kind::killed (the default) cannot be trapped (as Erlang's `exit(P, kill)`; its
/// links then see reason killed, which they can trap); other reasons reach a process that
/// traps exits as an exit_message, and a normal reason is ignored by one that does not.
/// A process that never receives again is not stopped by it. No-op if `p` has ended.
/// Any thread; never blocks.
inline void kill(pid p, const exit_reason& reason = {exit_kind::killed, nullptr}) {
  const bool untrappable = reason.kind == exit_kind::killed;
  detail::push_exit_signal(p, pid{}, reason, untrappable);
}

namespace detail {
struct bounded_send_awaiter : bounded_waiter {
  pid m_to;
  reserve_result m_r = reserve_result::queued;
  explicit bounded_send_awaiter(pid to) noexcept : m_to(to) {}
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    m_task = &h.promise();
    const reserve_result r = bounded_reserve(m_to, this);
    if (r == reserve_result::queued)
      return true;  // lifetime: once queued, the receiver may wake us at once: touch nothing
    m_r = r;
    return false;
  }
  /// ordering: m_granted was written under the mailbox lock before the wake that resumed us.
  bool await_resume() const noexcept { return m_r == reserve_result::queued ? m_granted : m_r == reserve_result::granted; }
};
}  // namespace detail

/// Sends `msg` to `to`, first waiting (suspending the calling task) while `to`'s bounded
/// mailbox is full; to an unbounded mailbox it is send(). Returns whether the message was
/// delivered (false: `to` ended). Threading: await it from a saturn task or process; the
/// waiting senders are served in order. Not cancellable.
template <class Msg>
task<bool> send_wait(pid_of<Msg> to, Msg msg) {
  detail::slot* s = detail::slot_at(to.index);
  if (s == nullptr)
    co_return false;
  if ((s->m_flags.load(std::memory_order_relaxed) & detail::slot_bounded) == 0)
    co_return send(to, std::move(msg));
  detail::bounded_send_awaiter aw(to);
  if (!co_await aw)
    co_return false;
  auto* n = new detail::msg_node<Msg>(std::move(msg));
  if (detail::inbox_push(to, n))
    co_return true;
  delete n;
  co_return false;
}

}  // namespace saturn
