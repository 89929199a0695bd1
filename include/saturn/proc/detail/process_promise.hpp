/// \file
/// The promise of a process coroutine: a saturn task promise (so every saturn awaitable
/// works inside a process) plus the private half of the mailbox — the list of messages
/// taken from the inbox but not yet received (selective receive leaves skipped ones
/// there, in order) — and the process's identity and exit state.
///
/// Lifecycle: spawn takes a pid slot and queues the process; its run-queue entry tracks
/// it as alive on first run. When the body ends (or throws), final_suspend ends the slot
/// (links and monitors notified), frees the messages left and the frame. When the runtime
/// shuts down with the process still alive, the entry is called with run_mode::discard:
/// the slot is ended without notifications and the frame destroyed.
#pragma once

#include <saturn/config.hpp>
#include <saturn/detail/atomic.hpp>
#include <saturn/proc/detail/node.hpp>
#include <saturn/proc/detail/signals.hpp>
#include <saturn/proc/detail/slot_table.hpp>
#include <saturn/task/detail/promise_base.hpp>

#include <atomic>
#include <coroutine>
#include <exception>
#include <type_traits>

namespace saturn {

template <class Msg>
class process;
template <class Msg>
class self_ref;

/// `co_await saturn::this_process` inside a process body gives its self_ref<Msg>.
struct this_process_t {};
inline constexpr this_process_t this_process{};

namespace detail {

/// What `co_await saturn::receive(...)` names in a process body (see process.hpp).
template <class Pred>
struct receive_tag {
  Pred m_pred;
};
template <class Msg, class Pred, bool Timed>
struct receive_awaiter;

/// A receive in progress (the awaiter); the process's entry asks it to complete or park.
struct receive_base {
  enum class op : std::uint8_t {
    try_complete,  ///< scan; true if the receive can complete, else park and return false
    scan,          ///< scan without parking
    abandon,       ///< the frame is destroyed while the receive is pending: release all
  };
  /// Only on the process's own thread of the moment.
  bool (*m_op)(receive_base* self, op what) noexcept = nullptr;
  /// The coroutine suspended in the receive: the process body, or a task it awaits.
  std::coroutine_handle<> m_waiter{};
};

enum class receive_outcome : std::uint8_t { none, got, timed_out, exit_signal };

/// The most messages any process found in its inbox when it took it (process_stats's
/// mailbox_depth_max). Read by every pull, written only when a pull beats it.
extern saturn::detail::atomic<std::uint32_t> g_mailbox_depth_max;
/// Raises g_mailbox_depth_max to `depth` (a CAS loop; only when a pull found a new record).
void raise_mailbox_depth_max(std::uint32_t depth) noexcept;

/// The untyped part of a process promise (88 bytes with promise_base).
struct process_promise_base : promise_base {
  /// Messages taken from the inbox, oldest first: a circular list kept by its newest
  /// node (m_tail->m_next is the oldest), so one pointer serves append and pop.
  node_base* m_tail = nullptr;
  receive_base* m_recv = nullptr;  ///< the receive the process is parked in (or running)
  node_base* m_got = nullptr;      ///< the pending receive's taken message or exit signal
  pid m_self{};
  std::uint32_t m_seq = 0;  ///< number of the last timed receive
  receive_outcome m_outcome = receive_outcome::none;
  bool m_trap = false;    ///< trap exits: exit signals arrive as exit_message
  bool m_bounded = false;
  bool m_failed = false;  ///< the body threw (the exception is in the slot's aux if it fitted)

  slot* slot_of() const noexcept {
    // ordering: relaxed: this process's own chunk was published before it was spawned.
    return g_slot_chunks[m_self.index >> slot_chunk_shift].load(std::memory_order_relaxed) +
           (m_self.index & ((1u << slot_chunk_shift) - 1));
  }

  void record_error(std::exception_ptr e) noexcept {
    m_failed = true;
    try {
      aux_of(slot_of())->m_error = std::move(e);  // only this process writes it
    } catch (...) {
      // out of memory: the reason becomes exit_kind::error without the exception
    }
  }

  /// Moves the inbox into the local list; true if anything arrived. Process thread.
  bool pull() noexcept {
    // ordering: acquire pairs with the senders' release CAS: the nodes' contents are visible.
    const std::uint64_t w = slot_of()->m_word.exchange(inbox_tag(m_self.generation) | inbox_empty, std::memory_order_acquire);
    if (!inbox_has_nodes(w))
      return false;
    // The inbox is newest first: reverse it onto the tail, so per-sender order holds.
    node_base* n = reinterpret_cast<node_base*>(inbox_payload(w));
    node_base* first = nullptr;
    node_base* last = n;
    std::uint32_t depth = 0;
    while (n) {
      node_base* next = n->m_next;
      n->m_next = first;
      first = n;
      n = next;
      ++depth;
    }
    // ordering: relaxed; a statistic. The line is written only on a new record, so this
    // load almost always hits a shared cache line.
    if constexpr (config::metrics) {
      if (depth > g_mailbox_depth_max.load(std::memory_order_relaxed)) [[unlikely]]
        raise_mailbox_depth_max(depth);
    }
    last->m_next = m_tail ? m_tail->m_next : first;
    if (m_tail)
      m_tail->m_next = first;
    m_tail = last;
    return true;
  }

  /// The first node after `prev` (nullptr: from the oldest), or nullptr at the end.
  node_base* first_after(node_base* prev) const noexcept {
    if (m_tail == nullptr || prev == m_tail)
      return nullptr;
    return prev ? prev->m_next : m_tail->m_next;
  }

  /// Marks the process parked if the inbox is empty. Process thread. After true, the
  /// frame belongs to whoever wakes it: touch nothing.
  bool park() noexcept {
    std::uint64_t expect = inbox_tag(m_self.generation) | inbox_empty;
    // ordering: release publishes m_recv and everything before parking to the waker.
    return slot_of()->m_word.compare_exchange_strong(expect, inbox_tag(m_self.generation) | inbox_parked,
                                                  std::memory_order_release, std::memory_order_relaxed);
  }

  /// Unlinks `n` (whose predecessor is `prev`, or nullptr for the oldest).
  void unlink(node_base* prev, node_base* n) noexcept {
    if (n->m_next == n) {
      m_tail = nullptr;
      return;
    }
    node_base* pp = prev ? prev : m_tail;
    pp->m_next = n->m_next;
    if (m_tail == n)
      m_tail = pp;
  }

  /// Puts `u` in the place of `n` (whose predecessor is `prev`, or nullptr).
  void replace(node_base* prev, node_base* n, node_base* u) noexcept {
    if (n->m_next == n) {
      u->m_next = u;
      m_tail = u;
      return;
    }
    node_base* pp = prev ? prev : m_tail;
    u->m_next = n->m_next;
    pp->m_next = u;
    if (m_tail == n)
      m_tail = u;
  }

  /// The reason the body ended with.
  exit_reason reason() const {
    if (!m_failed)
      return {};
    slot_aux* a = slot_of()->m_aux.load(std::memory_order_acquire);
    std::exception_ptr e = a ? a->m_error : nullptr;
    if (!e)
      return exit_reason{exit_kind::error, nullptr};
    try {
      std::rethrow_exception(e);
    } catch (const process_exit& x) {
      return x.reason();
    } catch (...) {
      return exit_reason{exit_kind::error, e};
    }
  }
};

template <class Msg>
struct process_promise final : process_promise_base {
  process_promise() noexcept { m_fn = &entry; }

  process<Msg> get_return_object() noexcept;
  std::suspend_always initial_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { record_error(std::current_exception()); }
  void return_void() noexcept {}

  struct final_awaiter {
    bool await_ready() noexcept { return false; }
    void await_suspend(std::coroutine_handle<process_promise> h) noexcept {
      process_promise& p = h.promise();
      p.untrack();
      exit_reason r;
      try {
        r = p.reason();
      } catch (...) {
        r = exit_reason{exit_kind::error, nullptr};
      }
      owned_base* owned = p.end(r, true);
      h.destroy();
      delete owned;  // lifetime: after the frame, which may refer to the callable
    }
    void await_resume() noexcept {}
  };
  final_awaiter final_suspend() noexcept { return {}; }

  /// `co_await this_process` gives the body its self_ref; everything else passes through.
  struct self_awaiter {
    process_promise* m_p;
    bool await_ready() const noexcept { return true; }
    void await_suspend(std::coroutine_handle<>) const noexcept {}
    self_ref<Msg> await_resume() const noexcept;
  };
  self_awaiter await_transform(this_process_t) noexcept { return {this}; }
  template <class Pred>
  receive_awaiter<Msg, Pred, false> await_transform(receive_tag<Pred> t) {
    return receive_awaiter<Msg, Pred, false>(this, std::move(t.m_pred));
  }
  /// A direct awaiter (sleep_for, an I/O awaiter) is awaited through a reference: g++ 12
  /// otherwise copies the xvalue an await_transform returns, and those awaiters are pinned
  /// (not movable: the loop holds their address). Anything else (a task, a join_handle)
  /// passes through to its own operator co_await.
  template <class A>
  struct by_ref {
    A& m_a;
    bool await_ready() { return m_a.await_ready(); }
    template <class H>
    decltype(auto) await_suspend(H h) {
      return m_a.await_suspend(h);
    }
    decltype(auto) await_resume() { return m_a.await_resume(); }
  };
  template <class A>
    requires requires(A& a) { a.await_ready(); }
  by_ref<std::remove_reference_t<A>> await_transform(A&& a) noexcept {
    return {a};
  }
  template <class A>
  A&& await_transform(A&& a) noexcept {
    return static_cast<A&&>(a);
  }

  /// Ends the slot and frees the messages left. Process thread (or shutdown).
  /// Returns the callable the process was started from (to free after the frame).
  owned_base* end(const exit_reason& r, bool notify) noexcept {
    node_base* rest = nullptr;
    owned_base* owned = nullptr;
    try {
      rest = end_process(m_self, r, notify, &owned);
    } catch (...) {
      // allocation failure while notifying: the slot is ended regardless (see end_process)
    }
    while (rest) {
      node_base* next = rest->m_next;
      free_node<Msg>(rest);
      rest = next;
    }
    if (m_tail) {
      node_base* n = m_tail->m_next;
      m_tail->m_next = nullptr;
      while (n) {
        node_base* next = n->m_next;
        free_node<Msg>(n);
        n = next;
      }
      m_tail = nullptr;
    }
    slot_release(m_self.index);
    return owned;
  }

  /// The run-queue entry: completes (or re-parks) a pending receive, then resumes.
  static void entry(runnable* r, run_mode mode) noexcept {
    auto* p = static_cast<process_promise*>(r);
    auto h = std::coroutine_handle<process_promise>::from_promise(*p);
    if (mode == run_mode::run) {
      // ordering: relaxed, as in spawned_entry: only npos-ness matters here.
      if (saturn::detail::atomic_ref<std::uint32_t>(p->m_live_index).load(std::memory_order_relaxed) == live_table::npos) [[unlikely]]
        p->track();
      if (receive_base* rb = p->m_recv) {
        const std::coroutine_handle<> waiter = rb->m_waiter;
        if (!rb->m_op(rb, receive_base::op::try_complete))
          return;  // re-parked (a signal that is not delivered, a stale time-out)
        waiter.resume();  // the receive may sit in a task the body awaits
        return;
      }
      h.resume();
      return;
    }
    // Shutdown: the process never resumes again.
    p->untrack();
    if (receive_base* rb = p->m_recv)
      rb->m_op(rb, receive_base::op::abandon);
    owned_base* owned = p->end(exit_reason{exit_kind::shutdown, nullptr}, false);
    h.destroy();
    delete owned;
  }
};

}  // namespace detail
}  // namespace saturn
