/// \file
/// The receive awaiter: takes the oldest message of the mailbox that a predicate accepts,
/// leaving the others in order (Erlang's selective receive, with its save pointer: a
/// receive that parks and is woken scans only the messages that arrived since).
///
/// System messages are handled during the scan, whatever the predicate: an exit signal
/// ends the receive by throwing process_exit (unless the process traps exits: then it
/// becomes an exit_message); a down message becomes a down_message; a time-out marker ends
/// a timed receive (a stale one, from an earlier receive, is dropped).
///
/// The awaiter is trivially destructible when its predicate is (g++ 12 destroys some
/// co_await operand temporaries twice): every resource is released in await_resume, or by
/// m_abandon if the frame is destroyed while the receive is pending.
#pragma once

#include <saturn/proc/detail/process_promise.hpp>
#include <saturn/proc/detail/receive_timer.hpp>

#include <optional>
#include <type_traits>

namespace saturn::detail {

/// Accepts every message.
struct accept_any {
  template <class M>
  bool operator()(const M&) const noexcept {
    return true;
  }
};

/// The extra state of a timed receive (empty for a plain one).
template <bool Timed>
struct receive_deadline {};
template <>
struct receive_deadline<true> {
  clock::time_point m_deadline{};
  receive_timer* m_timer = nullptr;
  std::uint32_t m_seq = 0;
};

/// The save pointer of a selective receive: the last scanned node kept in the mailbox.
/// A plain receive takes the oldest message, so it never skips one and needs none.
template <bool Selective>
struct receive_save {
  static constexpr node_base* m_prev = nullptr;
  void save(node_base*) noexcept {}
};
template <>
struct receive_save<true> {
  node_base* m_prev = nullptr;
  void save(node_base* n) noexcept { m_prev = n; }
};

template <class Msg, class Pred, bool Timed>
struct receive_awaiter : receive_base,
                         receive_deadline<Timed>,
                         receive_save<!std::is_same_v<Pred, accept_any>> {
  process_promise<Msg>* m_p;
  [[no_unique_address]] Pred m_pred;

  receive_awaiter(process_promise<Msg>* p, Pred pred) noexcept(std::is_nothrow_move_constructible_v<Pred>)
      : m_p(p), m_pred(std::move(pred)) {
    m_op = &run_op;
  }
  receive_awaiter(process_promise<Msg>* p, Pred pred, clock::time_point deadline) noexcept(
      std::is_nothrow_move_constructible_v<Pred>)
      : receive_awaiter(p, std::move(pred)) {
    this->m_deadline = deadline;
  }

  bool await_ready() const noexcept { return false; }

  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    m_waiter = h;
    m_p->m_outcome = receive_outcome::none;
    if constexpr (Timed) {
      if (try_complete(false))
        return false;
      if (clock::now() >= this->m_deadline) {
        m_p->m_outcome = receive_outcome::timed_out;
        return false;
      }
      this->m_seq = ++m_p->m_seq;
      this->m_timer = receive_timer::arm(m_p->m_self, this->m_seq, this->m_deadline);
    }
    // Set only now: if arming threw, no wake-up may find a receive that is gone.
    m_p->m_recv = this;
    return !try_complete(true);  // lifetime: after a park, touch nothing
  }

  auto await_resume() {
    m_p->m_recv = nullptr;
    if constexpr (Timed) {
      if (this->m_timer)
        std::exchange(this->m_timer, nullptr)->finish();
    }
    if (m_p->m_outcome == receive_outcome::exit_signal) [[unlikely]] {
      auto* s = static_cast<sys_node*>(std::exchange(m_p->m_got, nullptr));
      exit_reason r = std::move(s->m_reason);
      delete s;
      throw process_exit(std::move(r));
    }
    if constexpr (Timed) {
      if (m_p->m_outcome == receive_outcome::timed_out)
        return std::optional<Msg>{};
    }
    auto* n = static_cast<msg_node<Msg>*>(std::exchange(m_p->m_got, nullptr));
    struct free_guard {
      msg_node<Msg>* n;
      ~free_guard() { delete n; }
    } guard{n};
    if (m_p->m_bounded && n->m_seq == 0) [[unlikely]]  // a converted signal was never counted
      bounded_consumed(m_p->m_self);
    if constexpr (Timed)
      return std::optional<Msg>(std::move(n->m_value));
    else
      return Msg(std::move(n->m_value));
  }

  static bool run_op(receive_base* b, op what) noexcept {
    auto* self = static_cast<receive_awaiter*>(b);
    if (what != op::abandon) [[likely]]
      return self->try_complete(what == op::try_complete);
    if constexpr (Timed) {
      if (self->m_timer)
        std::exchange(self->m_timer, nullptr)->finish();
    }
    if (self->m_p->m_got)
      free_node<Msg>(std::exchange(self->m_p->m_got, nullptr));
    return false;
  }

  /// Replaces the system node `n` (after m_prev) by a user node holding `m`.
  template <class M>
  node_base* replace(node_base* n, M&& m) {
    auto* u = new msg_node<Msg>(std::forward<M>(m));
    u->m_seq = 1;  // not counted against a bounded mailbox
    m_p->replace(this->m_prev, n, u);
    delete static_cast<sys_node*>(n);
    return u;
  }

  bool try_complete(bool park) noexcept {
    process_promise<Msg>* p = m_p;
    for (;;) {
      node_base* n = p->first_after(this->m_prev);
      while (n) {
        if (n->m_kind == node_kind::user) [[likely]] {
          if (m_pred(static_cast<const msg_node<Msg>*>(n)->m_value)) {
            p->unlink(this->m_prev, n);
            p->m_got = n;
            p->m_outcome = receive_outcome::got;
            return true;
          }
          this->save(n);
          n = p->first_after(n);
          continue;
        }
        auto* s = static_cast<sys_node*>(n);
        switch (n->m_kind) {
          case node_kind::exit_signal: {
            const bool kill = s->m_seq == exit_untrappable;
            if (!kill && p->m_trap) {
              if constexpr (std::is_constructible_v<Msg, exit_message>) {
                try {
                  n = replace(n, exit_message{s->m_from, s->m_reason});
                  continue;  // the predicate sees it now
                } catch (...) {
                }
              }
            } else if (kill || !s->m_reason.is_normal()) {
              p->unlink(this->m_prev, n);
              p->m_got = n;
              p->m_outcome = receive_outcome::exit_signal;
              return true;
            }
            break;  // dropped
          }
          case node_kind::down:
            if constexpr (std::is_constructible_v<Msg, down_message>) {
              try {
                n = replace(n, down_message{s->m_ref, s->m_from, s->m_reason});
                continue;
              } catch (...) {
              }
            }
            break;  // dropped
          case node_kind::timeout:
            if constexpr (Timed) {
              if (n->m_seq == this->m_seq && this->m_timer != nullptr) {
                p->unlink(this->m_prev, n);
                delete s;
                p->m_outcome = receive_outcome::timed_out;
                return true;
              }
            }
            break;  // stale
          case node_kind::user:
            break;
        }
        // Drop the system node n.
        p->unlink(this->m_prev, n);
        delete s;
        n = p->first_after(this->m_prev);
      }
      if (p->pull())
        continue;
      if (!park || p->park())
        return false;
    }
  }
};

}  // namespace saturn::detail
