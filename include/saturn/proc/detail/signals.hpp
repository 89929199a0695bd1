/// \file
/// What happens around a process's mailbox besides plain messages: links, monitors,
/// bounded-mailbox credits, and the end of a process (implemented in src/proc/).
///
/// Protocol (links and monitors): the per-slot `slot_aux` (created on first use, kept with
/// the slot) holds the links, the monitors watching the process, and the bounded-mailbox
/// state, under its spin lock. A process that ends first bumps its slot's generation and
/// then reads m_aux; link()/monitor() first install m_aux and then, under its lock, check
/// the generation. Both sides use seq_cst, so either the ender sees the aux (and, taking
/// its lock, the new link) or the linker sees the new generation (and reports noproc):
/// a link or monitor is never lost, and each fires at most once (it is removed from the
/// lists under the lock by whoever acts on it).
#pragma once

#include <saturn/proc/detail/slot_table.hpp>
#include <saturn/sync/detail/spin_lock.hpp>

#include <utility>
#include <vector>

namespace saturn::detail {

/// A sender waiting for room in a bounded mailbox (lives in the sender's frame).
struct bounded_waiter {
  bounded_waiter* m_next = nullptr;
  promise_base* m_task = nullptr;
  bool m_granted = false;
};

/// Something a process owns and frees at its end (the callable it was started from).
struct owned_base {
  virtual ~owned_base() = default;
};

/// The rarely used part of a slot (links, monitors, bounded mailbox). Kept with the slot
/// and reused by the slot's next process.
struct slot_aux {
  spin_lock m_lock;
  std::vector<pid> m_links;
  std::vector<std::pair<monitor_ref, pid>> m_monitors;  ///< (ref, watcher) watching this slot's process
  std::uint32_t m_capacity = 0;  ///< bounded mailbox: 0 = unbounded
  std::uint32_t m_count = 0;     ///< bounded mailbox: messages counted in
  bounded_waiter* m_wait_head = nullptr;
  bounded_waiter* m_wait_tail = nullptr;
  owned_base* m_owned = nullptr;  ///< the process's callable (spawn_process with state)
  std::exception_ptr m_error{};   ///< what the process's body threw (written by itself)
};

/// The aux of `s`, created if missing. Any thread.
slot_aux* aux_of(slot* s);

/// Pushes an exit signal (from `from`, for `reason`) to `to`; no-op if `to` has ended.
void push_exit_signal(pid to, pid from, const exit_reason& reason, bool untrappable = false);
/// Pushes a down message to `watcher`; no-op if it has ended.
void push_down(pid watcher, monitor_ref ref, pid from, const exit_reason& reason);
/// Pushes a receive time-out marker for the receive numbered `seq` of `to`.
void push_timeout(pid to, std::uint32_t seq);

/// Links `self` and `other` (both directions). If `other` has ended, `self` gets an exit
/// signal with reason noproc instead. Any thread.
void link_pids(pid self, pid other);
/// Removes the link between `self` and `other`, if any. Any thread.
void unlink_pids(pid self, pid other) noexcept;
/// `watcher` monitors `target`; a down message follows exactly once (noproc at once if
/// `target` has ended). Any thread.
monitor_ref monitor_pid(pid watcher, pid target);
/// Cancels a monitor; a down message already sent stays in the mailbox. Any thread.
void demonitor_pid(pid target, monitor_ref ref) noexcept;

/// Makes the mailbox of a just-spawned process (not yet published) bounded.
void make_bounded(pid p, std::uint32_t capacity);
/// Outcome of bounded_reserve.
enum class reserve_result { granted, queued, dead };
/// Reserves room for one message in the bounded mailbox of `to`, or queues `w` (its
/// m_task set) to be woken when room appears (m_granted says whether it got room).
reserve_result bounded_reserve(pid to, bounded_waiter* w);
/// Counts one message sent without waiting into the bounded mailbox of `to`.
void bounded_count(pid to) noexcept;
/// The process `self` consumed one message from its bounded mailbox: wakes a waiting
/// sender (handing it the room) or lowers the count. Called by the receiver.
void bounded_consumed(pid self) noexcept;

/// Ends the process `self` in the pid table: bumps the generation (so sends and alive()
/// see it as dead), closes the inbox, unregisters its names, and — when `notify` —
/// delivers exit signals to its links and down messages to its monitors. Returns the
/// nodes left in the inbox (newest first) for the caller to free with their type.
/// `*owned` receives the process's callable, to free once the frame is gone.
node_base* end_process(pid self, const exit_reason& reason, bool notify, owned_base** owned);

/// Forgets every name registered for `p` (registry.cpp).
void registry_forget(pid p) noexcept;

}  // namespace saturn::detail
