/// \file
/// `oneshot<T>`: one value, from one producer to one consumer. make() returns a connected
/// sender and receiver; the sender sends at most once; the receiver awaits the value. A
/// sender destroyed without sending makes the receiver's wait end with broken_pipe, so a
/// consumer never waits forever for a producer that is gone.
///
/// ```
/// auto [tx, rx] = saturn::oneshot<int>::make();
/// saturn::spawn(produce(std::move(tx))).detach();   // calls tx.send(42)
/// saturn::result<int> v = co_await rx.receive();
/// ```
#pragma once

#include <saturn/result.hpp>
#include <saturn/sync/detail/waiter.hpp>

#include <coroutine>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace saturn {
namespace detail {

/// What a sender and its receiver share: one allocation per oneshot.
template <class T>
struct oneshot_state {
  spin_lock m_lock;
  std::optional<T> m_value;        ///< sent and not yet received (guarded by m_lock)
  bool m_sender_done = false;      ///< sent or dropped (guarded by m_lock)
  bool m_receiver_gone = false;    ///< guarded by m_lock
  waiter_list m_waiters{m_lock};   ///< the receiver, while it waits
  atomic<unsigned> m_refs{2};

  void release() noexcept {
    // ordering: acq_rel: the last owner sees every write of the other before freeing.
    if (m_refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete this;
  }
};

template <class T>
struct oneshot_receive_awaiter : waiter {
  oneshot_state<T>* m_state;
  std::optional<T> m_slot;

  explicit oneshot_receive_awaiter(oneshot_state<T>* s) noexcept : m_state(s) {}
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn_promise<P>, "saturn::oneshot receive() must be awaited from a saturn::task");
    {
      std::lock_guard<spin_lock> g(m_state->m_lock);
      if (m_state->m_value) {
        m_slot.emplace(std::move(*m_state->m_value));
        m_state->m_value.reset();
        m_outcome = wait_outcome::ok;
        return false;
      }
      if (m_state->m_sender_done) {
        m_outcome = wait_outcome::closed;
        return false;
      }
      if (!link(m_state->m_waiters, &h.promise()))
        return false;
    }
    return park();
  }
  result<T> await_resume() noexcept {
    unpark();
    if (m_outcome == wait_outcome::ok)
      return result<T>(std::move(*m_slot));
    return result<T>(to_result("oneshot::receive", "oneshot::receive: no value (the sender was dropped "
                                                   "without sending, or the value was already received)")
                         .err());
  }
};

}  // namespace detail

/// Namespace-like holder of the oneshot types; create a pair with make().
template <class T>
struct oneshot {
  static_assert(std::is_object_v<T> && !std::is_const_v<T>, "oneshot<T> carries non-const object types");
  static_assert(std::is_nothrow_move_constructible_v<T>, "oneshot<T> needs T with a noexcept move constructor");

  class receiver;

  /// The producing end. Move-only; destroying it without sending wakes the receiver with
  /// broken_pipe.
  ///
  /// Threading: one owner at a time; send() and the destructor may run on any thread,
  /// including plain OS threads, and never suspend.
  class sender {
   public:
    sender() noexcept = default;
    sender(sender&& o) noexcept : m_state(std::exchange(o.m_state, nullptr)) {}
    sender& operator=(sender&& o) noexcept {
      if (this != &o) {
        drop();
        m_state = std::exchange(o.m_state, nullptr);
      }
      return *this;
    }
    ~sender() { drop(); }

    /// Sends the value (once; the sender is empty afterwards). Returns ok, or broken_pipe
    /// when the receiver was already destroyed — then `v` is not moved from. Throws
    /// std::logic_error on an empty sender (sent already, or moved from).
    result<void> send(T&& v) {
      detail::oneshot_state<T>* s = take_state();
      bool delivered = false;
      {
        detail::wake_list woken;  // notifies after the lock is released
        std::lock_guard<detail::spin_lock> g(s->m_lock);
        if (!s->m_receiver_gone) {
          if (!s->m_waiters.empty())
            static_cast<detail::oneshot_receive_awaiter<T>*>(s->m_waiters.front())->m_slot.emplace(std::move(v));
          else
            s->m_value.emplace(std::move(v));
          s->m_waiters.pop_all_into(woken, detail::wait_outcome::ok);
          delivered = true;
        }
        s->m_sender_done = true;
      }
      s->release();
      if (!delivered)
        return error{std::make_error_code(std::errc::broken_pipe), "oneshot::send: receiver dropped"};
      return {};
    }
    /// As send(T&&), sending a copy of `v`.
    result<void> send(const T& v) {
      T copy(v);
      return send(std::move(copy));
    }
    /// True when the receiver is gone (a send would fail). Any thread.
    bool is_closed() const noexcept {
      if (m_state == nullptr)
        return true;
      std::lock_guard<detail::spin_lock> g(m_state->m_lock);
      return m_state->m_receiver_gone;
    }
    /// True while this sender may still send.
    explicit operator bool() const noexcept { return m_state != nullptr; }

   private:
    friend struct oneshot;
    explicit sender(detail::oneshot_state<T>* s) noexcept : m_state(s) {}
    detail::oneshot_state<T>* take_state() {
      if (m_state == nullptr)
        throw std::logic_error("saturn::oneshot::sender::send: this sender already sent or was moved from");
      return std::exchange(m_state, nullptr);
    }
    void drop() noexcept {
      detail::oneshot_state<T>* s = std::exchange(m_state, nullptr);
      if (s == nullptr)
        return;
      {
        detail::wake_list woken;  // notifies after the lock is released
        std::lock_guard<detail::spin_lock> g(s->m_lock);
        s->m_sender_done = true;
        s->m_waiters.pop_all_into(woken, detail::wait_outcome::closed);
      }
      s->release();
    }
    detail::oneshot_state<T>* m_state = nullptr;
  };

  /// The consuming end. Move-only.
  ///
  /// Threading: one owner at a time; receive() is awaited from a saturn task (one await
  /// at a time) and is cancellable by its stop token (operation_canceled; the value, if
  /// it comes, stays for a later receive). try_receive() and the destructor may run on any
  /// thread. The receiver must outlive its receive awaits.
  class receiver {
   public:
    receiver() noexcept = default;
    receiver(receiver&& o) noexcept : m_state(std::exchange(o.m_state, nullptr)) {}
    receiver& operator=(receiver&& o) noexcept {
      if (this != &o) {
        drop();
        m_state = std::exchange(o.m_state, nullptr);
      }
      return *this;
    }
    ~receiver() { drop(); }

    /// `co_await rx.receive()`: the value, once sent (at once if it was). broken_pipe if
    /// the sender was dropped without sending (or the value was already received);
    /// operation_canceled if the task's stop token stopped the wait first. Throws
    /// std::logic_error on an empty receiver.
    [[nodiscard]] detail::oneshot_receive_awaiter<T> receive() {
      if (m_state == nullptr)
        throw std::logic_error("saturn::oneshot::receiver::receive: empty receiver (moved from)");
      return detail::oneshot_receive_awaiter<T>(m_state);
    }
    /// The value if it was sent; resource_unavailable_try_again if not yet; broken_pipe if
    /// it never will be. Never waits; any thread.
    result<T> try_receive() {
      if (m_state == nullptr)
        throw std::logic_error("saturn::oneshot::receiver::try_receive: empty receiver (moved from)");
      std::optional<T> v;
      {
        std::lock_guard<detail::spin_lock> g(m_state->m_lock);
        if (m_state->m_value) {
          v.emplace(std::move(*m_state->m_value));
          m_state->m_value.reset();
        } else if (m_state->m_sender_done) {
          return error{std::make_error_code(std::errc::broken_pipe), "oneshot::try_receive: no value (sender dropped)"};
        } else {
          return error{std::make_error_code(std::errc::resource_unavailable_try_again), "oneshot::try_receive: not sent yet"};
        }
      }
      return result<T>(std::move(*v));
    }
    /// True while this receiver is connected to a sender's state.
    explicit operator bool() const noexcept { return m_state != nullptr; }

   private:
    friend struct oneshot;
    explicit receiver(detail::oneshot_state<T>* s) noexcept : m_state(s) {}
    void drop() noexcept {
      detail::oneshot_state<T>* s = std::exchange(m_state, nullptr);
      if (s == nullptr)
        return;
      {
        std::lock_guard<detail::spin_lock> g(s->m_lock);
        s->m_receiver_gone = true;
      }
      s->release();
    }
    detail::oneshot_state<T>* m_state = nullptr;
  };

  /// A connected sender and receiver (one allocation). Any thread.
  static std::pair<sender, receiver> make() {
    auto* s = new detail::oneshot_state<T>();
    return {sender(s), receiver(s)};
  }
};

}  // namespace saturn
