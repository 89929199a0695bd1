// The park / notify / cancel protocol of sync waiters (see saturn/sync/detail/waiter.hpp).
#include <saturn/sync/detail/waiter.hpp>

#include <mutex>

namespace saturn::detail {

void waiter::drop_box() noexcept {
  // lifetime: deleting the box destroys the std::stop_callback, which waits for a
  // callback running on another thread to return.
  if (callback_box* b = box()) {
    // ordering: relaxed; only this task writes the word, and no notifier reads it any more
    // (the wait is over, or the frame is being destroyed while it waits).
    m_promise_or_box.store(reinterpret_cast<std::uintptr_t>(b->promise), std::memory_order_relaxed);
    delete b;
  }
}

waiter::~waiter() {
  drop_box();
  // lifetime: we get here with m_list set only when the frame is destroyed while it waits
  // (a runtime shutting down). A primitive that died first nulled m_list (~waiter_list); a
  // notified waiter is unlinked already, and its primitive may be gone: leave it alone.
  // ordering: acquire pairs with notify()'s exchange.
  if (m_list != nullptr && m_state.load(std::memory_order_acquire) != notified) {
    std::lock_guard<spin_lock> g(m_list->lock());
    if (m_linked)
      m_list->erase(this);
  }
}

bool waiter::link(waiter_list& list, promise_base* p) noexcept {
  // ordering: relaxed; the list's lock publishes it to a signaller.
  m_promise_or_box.store(reinterpret_cast<std::uintptr_t>(p), std::memory_order_relaxed);
  if (p->token().stop_requested()) {
    m_outcome = wait_outcome::canceled;
    return false;
  }
  list.push_back(this);
  return true;
}

bool waiter::park() noexcept {
  promise_base* p = promise();
  const std::stop_token& token = p->token();
  if (token.stop_possible()) {
    auto* b = new callback_box{p, std::stop_callback<stop_fn>(token, stop_fn{this})};  // may run cancel() here
    // ordering: release publishes b->promise to a notifier that reads the word (promise()).
    m_promise_or_box.store(reinterpret_cast<std::uintptr_t>(b) | boxed, std::memory_order_release);
  }
  std::uint8_t expected = arming;
  // ordering: acq_rel: release hands this frame's state (the callback just armed) to a
  // notifier that may resume us on another thread; acquire, taken on failure too, makes
  // the outcome written by a notifier that came first visible here.
  return m_state.compare_exchange_strong(expected, parked, std::memory_order_acq_rel, std::memory_order_acquire);
}

void waiter::unpark() noexcept {
  // lifetime: dropping the box waits for a stop callback running on another thread to
  // return; after that no other thread reads this waiter.
  drop_box();
  m_list = nullptr;
}

result<void> waiter::to_result(const char* op, const char* closed_op) const noexcept {
  switch (m_outcome) {
    case wait_outcome::ok: return {};
    case wait_outcome::canceled: return error{std::make_error_code(std::errc::operation_canceled), op};
    case wait_outcome::closed: return error{std::make_error_code(std::errc::broken_pipe), closed_op};
    case wait_outcome::pending: break;
  }
  return error{std::make_error_code(std::errc::state_not_recoverable), op};  // unreachable
}

void waiter::cancel() noexcept {
  // ordering: acquire pairs with notify()'s exchange. A notified waiter was unlinked; its
  // primitive must not be touched (it may be gone if the owner broke the lifetime rule).
  if (m_state.load(std::memory_order_acquire) == notified)
    return;
  waiter_list* list = m_list;
  if (list == nullptr)
    return;  // detached: its primitive was destroyed
  {
    std::lock_guard<spin_lock> g(list->lock());
    if (!m_linked)
      return;  // a signaller unlinked it first and notifies it
    list->erase(this);
    m_outcome = wait_outcome::canceled;
  }
  notify(this);
}

void notify(waiter* w) noexcept {
  promise_base* p = w->promise();  // lifetime: read before the exchange frees the waiter to go
  // ordering: acq_rel: release publishes the outcome (and any value) written under the
  // lock; acquire sees the task's park() before we hand the task to a scheduler, which may
  // resume it on another thread.
  if (w->m_state.exchange(waiter::notified, std::memory_order_acq_rel) == waiter::parked)
    p->wake();
}

waiter_list::~waiter_list() {
  if (m_head == nullptr)
    return;
  std::lock_guard<spin_lock> g(*m_lock);
  while (!empty()) {
    waiter* w = pop_front();
    w->m_list = nullptr;  // detached: it stays suspended until its runtime destroys it
  }
}

}  // namespace saturn::detail
