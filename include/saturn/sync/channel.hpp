/// \file
/// `channel<T>`: a multi-producer, multi-consumer FIFO queue between tasks (and threads).
///
/// Bounded (`channel<T> ch(n)`, n ≥ 1): at most n values are queued; a sender awaits while
/// the channel is full (backpressure). Unbounded (`channel<T> ch(saturn::unbounded)`):
/// sends never wait. A value handed to a receiver that is already waiting goes straight
/// into its frame; when a receiver takes a value from a full channel, the oldest waiting
/// sender's value moves into the freed slot and that sender is woken.
///
/// Closing: close() wakes every waiting sender and receiver. Values already queued stay:
/// receivers drain them first and only then see "closed" (std::errc::broken_pipe). A send
/// on a closed channel fails with broken_pipe and the value is not lost: a send only moves
/// from its argument when it succeeds, so after a failed `co_await ch.send(std::move(v))`
/// `v` still holds the value (a failed send of a const T& leaves the caller's object as it
/// was; a temporary argument is destroyed with the full expression, like any unused
/// temporary).
///
/// ```
/// saturn::channel<int> ch(16);
/// // producer:                              // consumer:
/// auto sent = co_await ch.send(42);         while (auto v = co_await ch.receive()) use(*v);
/// ch.close();                               // ends with broken_pipe once drained
/// ```
#pragma once

#include <saturn/result.hpp>
#include <saturn/sync/detail/ring_buffer.hpp>
#include <saturn/sync/detail/waiter.hpp>

#include <cassert>
#include <coroutine>
#include <cstddef>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace saturn {

/// The capacity of a channel whose sends never wait.
inline constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();

template <class T>
class channel;

namespace detail {

template <class T>
struct channel_send_awaiter : waiter {
  channel<T>* m_channel;
  T* m_source = nullptr;       ///< the value to send; moved from only on success
  std::optional<T> m_copy;     ///< owns the copy made by send(const T&)

  channel_send_awaiter(channel<T>* ch, T* source) noexcept : m_channel(ch), m_source(source) {}
  channel_send_awaiter(channel<T>* ch, const T& value) : m_channel(ch), m_copy(value) {}
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    static_assert(saturn_promise<P>, "saturn::channel::send() must be awaited from a saturn::task");
    if (m_copy)
      m_source = &*m_copy;  // lifetime: the awaiter is in its final place now
    return m_channel->suspend_send(*this, &h.promise());
  }
  wait_result await_resume() noexcept {
    unpark();
    return to_wait_result(wait_op::channel_send);
  }
};

template <class T>
struct channel_receive_awaiter : waiter {
  channel<T>* m_channel;
  std::optional<T> m_slot;  ///< where the received value lands

  explicit channel_receive_awaiter(channel<T>* ch) noexcept : m_channel(ch) {}
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn_promise<P>, "saturn::channel::receive() must be awaited from a saturn::task");
    return m_channel->suspend_receive(*this, &h.promise());
  }
  result<T> await_resume() noexcept {
    unpark();
    if (m_outcome == wait_outcome::ok)
      return result<T>(std::move(*m_slot));
    return result<T>(to_result("channel::receive", "channel::receive: channel closed").err());
  }
};

}  // namespace detail

/// A bounded or unbounded MPMC channel of T (T must be nothrow-move-constructible).
///
/// Threading: every member may be called from any thread; try_send, try_receive, close,
/// is_closed and size never suspend and may be called from plain OS threads (a task
/// waiting on another thread's runtime is woken through that runtime's remote queue).
/// send() and receive() are awaited from a saturn task and suspend the task, never the
/// thread; both are cancellable by the task's stop token (std::errc::operation_canceled;
/// a cancelled send did not send, a cancelled receive took nothing). Waiters are served
/// in FIFO order. Lifetime: see saturn/sync/detail/waiter.hpp; values still queued when
/// the channel is destroyed are destroyed with it.
template <class T>
class channel {
  static_assert(std::is_object_v<T> && !std::is_const_v<T>, "channel<T> carries non-const object types");
  static_assert(std::is_nothrow_move_constructible_v<T>, "channel<T> needs T with a noexcept move constructor");

 public:
  /// A channel holding at most `capacity` queued values (saturn::unbounded: no limit).
  /// Throws std::invalid_argument for 0 (there are no rendezvous channels).
  explicit channel(std::size_t capacity) : m_capacity(capacity) {
    if (capacity == 0)
      throw std::invalid_argument(
          "saturn::channel: capacity must be at least 1; pass saturn::unbounded for an unbounded channel");
  }
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;

  /// `co_await ch.send(std::move(v))` queues v, suspending while the channel is full.
  /// Returns ok; broken_pipe if the channel is (or gets) closed first; operation_canceled
  /// if the task's stop token stopped the wait first. On failure `v` is not moved from.
  /// `v` must live until the await ends: await the result directly.
  /// g++ 12: an aggregate T built in the operand (`co_await ch.send(msg{str})`) is freed
  /// before the value is taken (a use after free); build it first (`msg m{str};
  /// co_await ch.send(std::move(m));`). A temporary of a class with a constructor is fine.
  [[nodiscard]] detail::channel_send_awaiter<T> send(T&& v) noexcept {
    return detail::channel_send_awaiter<T>(this, &v);
  }
  /// As send(T&&), sending a copy of `v` (made now).
  [[nodiscard]] detail::channel_send_awaiter<T> send(const T& v) { return detail::channel_send_awaiter<T>(this, v); }

  /// Queues v if that needs no wait. Returns ok; resource_unavailable_try_again when full;
  /// broken_pipe when closed. On failure `v` is not moved from. Any thread.
  result<void> try_send(T&& v) {
    detail::wake_list woken;  // notifies after the lock is released
    std::lock_guard<detail::spin_lock> g(m_lock);
    switch (deliver_locked(v, woken)) {
      case delivery::done: return {};
      case delivery::closed: return error{std::make_error_code(std::errc::broken_pipe), "channel::try_send: channel closed"};
      case delivery::full: break;
    }
    return error{std::make_error_code(std::errc::resource_unavailable_try_again), "channel::try_send: channel full"};
  }
  /// As try_send(T&&), sending a copy of `v`.
  result<void> try_send(const T& v) {
    T copy(v);
    return try_send(std::move(copy));
  }

  /// `co_await ch.receive()` takes the oldest value, suspending while the channel is
  /// empty. Returns the value; broken_pipe once the channel is closed and drained;
  /// operation_canceled if the task's stop token stopped the wait first.
  [[nodiscard]] detail::channel_receive_awaiter<T> receive() noexcept {
    return detail::channel_receive_awaiter<T>(this);
  }
  /// Takes the oldest value if there is one. Returns it; resource_unavailable_try_again
  /// when empty; broken_pipe when closed and drained. Any thread.
  result<T> try_receive() {
    std::optional<T> slot;
    {
      detail::wake_list woken;  // notifies after the lock is released
      std::lock_guard<detail::spin_lock> g(m_lock);
      if (!take_locked(slot, woken)) {
        if (m_closed)
          return error{std::make_error_code(std::errc::broken_pipe), "channel::try_receive: channel closed"};
        return error{std::make_error_code(std::errc::resource_unavailable_try_again), "channel::try_receive: channel empty"};
      }
    }
    return result<T>(std::move(*slot));
  }

  /// Closes the channel: later sends fail, waiting senders and receivers are woken (with
  /// broken_pipe), queued values remain for receivers to drain. Idempotent; any thread.
  void close() noexcept {
    detail::wake_list woken;  // notifies after the lock is released
    std::lock_guard<detail::spin_lock> g(m_lock);
    if (m_closed)
      return;
    m_closed = true;
    m_senders.pop_all_into(woken, detail::wait_outcome::closed);
    m_receivers.pop_all_into(woken, detail::wait_outcome::closed);  // only when nothing is queued
  }

  /// True once close() was called (a snapshot). Any thread.
  bool is_closed() const noexcept {
    std::lock_guard<detail::spin_lock> g(m_lock);
    return m_closed;
  }
  /// Values queued right now (a snapshot; never more than capacity()). Any thread.
  std::size_t size() const noexcept {
    std::lock_guard<detail::spin_lock> g(m_lock);
    return m_buffer.size();
  }
  /// The capacity given at construction (saturn::unbounded for an unbounded channel).
  std::size_t capacity() const noexcept { return m_capacity; }

 private:
  friend struct detail::channel_send_awaiter<T>;
  friend struct detail::channel_receive_awaiter<T>;
  using send_awaiter = detail::channel_send_awaiter<T>;
  using receive_awaiter = detail::channel_receive_awaiter<T>;
  enum class delivery { done, full, closed };

  /// Under m_lock: hands `v` to the oldest waiting receiver, else queues it. Moves from `v`
  /// only when it returns done. May throw std::bad_alloc (growing the buffer), changing
  /// nothing.
  delivery deliver_locked(T& v, detail::wake_list& woken) {
    if (m_closed)
      return delivery::closed;
    if (!m_receivers.empty()) {  // then nothing is queued
      static_cast<receive_awaiter*>(m_receivers.front())->m_slot.emplace(std::move(v));
      m_receivers.pop_front_into(woken, detail::wait_outcome::ok);
      return delivery::done;
    }
    if (m_buffer.size() >= m_capacity)
      return delivery::full;
    m_buffer.push_back(std::move(v));
    return delivery::done;
  }

  /// Under m_lock: moves the oldest value into `slot`, then refills the freed place from
  /// the oldest waiting sender. False when nothing is queued. Never throws.
  bool take_locked(std::optional<T>& slot, detail::wake_list& woken) noexcept {
    if (m_buffer.empty()) {
      assert(m_senders.empty() && "senders wait only while the buffer is full");
      return false;
    }
    slot.emplace(m_buffer.pop_front());
    if (!m_senders.empty()) {
      // No allocation: pop_front just freed a slot of the buffer's array.
      m_buffer.push_back(std::move(*static_cast<send_awaiter*>(m_senders.front())->m_source));
      m_senders.pop_front_into(woken, detail::wait_outcome::ok);
    }
    return true;
  }

  bool suspend_send(send_awaiter& w, detail::promise_base* p) {
    detail::wake_list woken;  // notifies after the lock is released
    {
      std::lock_guard<detail::spin_lock> g(m_lock);
      switch (deliver_locked(*w.m_source, woken)) {
        case delivery::done: w.m_outcome = detail::wait_outcome::ok; return false;
        case delivery::closed: w.m_outcome = detail::wait_outcome::closed; return false;
        case delivery::full: break;
      }
      if (!w.link(m_senders, p))
        return false;
    }
    return w.park();
  }

  bool suspend_receive(receive_awaiter& w, detail::promise_base* p) noexcept {
    detail::wake_list woken;  // notifies after the lock is released
    {
      std::lock_guard<detail::spin_lock> g(m_lock);
      if (take_locked(w.m_slot, woken)) {
        w.m_outcome = detail::wait_outcome::ok;
        return false;
      }
      if (m_closed) {
        w.m_outcome = detail::wait_outcome::closed;
        return false;
      }
      if (!w.link(m_receivers, p))
        return false;
    }
    return w.park();
  }

  mutable detail::spin_lock m_lock;
  detail::ring_buffer<T> m_buffer;  ///< guarded by m_lock
  std::size_t m_capacity;
  bool m_closed = false;  ///< guarded by m_lock
  detail::waiter_list m_senders{m_lock};
  detail::waiter_list m_receivers{m_lock};
};

}  // namespace saturn
