// The park / cancel / leave paths of a task_wait (see saturn/sync/detail/task_wait.hpp).
#include <saturn/sync/detail/task_wait.hpp>

#include <mutex>

namespace saturn::detail {

bool task_wait_park(promise_base* p, task_wait_list* list) noexcept {
  std::uint32_t bits = wait_parked;
  const std::stop_token& token = p->token();
  if (token.stop_possible()) {
    auto* b = new task_wait_box(p, list, token);  // may run the stop callback here
    p->m_wait.list_or_box = reinterpret_cast<std::uintptr_t>(b);
    bits |= wait_boxed;
  }
  // ordering: acq_rel: release hands this frame's state (the box just armed) to a notifier
  // that may resume us on another thread; acquire makes a notification that came first
  // (and its outcome) visible here.
  return (p->m_join.fetch_or(bits, std::memory_order_acq_rel) & wait_notified) == 0;
}

void task_wait_box::stop_fn::operator()() const noexcept {
  promise_base* p = self->promise;
  // ordering: acquire pairs with task_wait_notify: a notified task was unlinked and its
  // primitive must not be touched (it may be gone if the owner broke the lifetime rule).
  if (p->m_join.load(std::memory_order_acquire) & wait_notified)
    return;
  task_wait_list* waiting_on = self->list;
  if (waiting_on == nullptr)
    return;  // detached: its primitive was destroyed
  {
    std::lock_guard<spin_lock> g(waiting_on->lock());
    if (!task_wait_list::linked(p))
      return;  // a signaller unlinked it first and notifies it
    waiting_on->erase(p);
  }
  task_wait_notify(p, wait_canceled);
}

void leave_task_wait(promise_base* p) noexcept {
  // ordering: acquire pairs with task_wait_notify's release.
  const std::uint32_t bits = p->m_join.load(std::memory_order_acquire);
  // lifetime: still linked only when the frame is destroyed (or its task abandoned) while
  // it waits: a runtime shutting down. A notified task was unlinked, and its primitive may
  // be gone: leave it alone. A primitive that died first nulled the list (~task_wait_list).
  if ((bits & wait_parked) != 0 && (bits & wait_notified) == 0) {
    task_wait_list* list = (bits & wait_boxed) != 0 ? wait_box(p)->list
                                                    : reinterpret_cast<task_wait_list*>(p->m_wait.list_or_box);
    if (list != nullptr) {
      std::lock_guard<spin_lock> g(list->lock());
      if (task_wait_list::linked(p))
        list->erase(p);
    }
  }
  (void)task_wait_finish(p);  // frees the box, clears the bits
}

task_wait_list::~task_wait_list() {
  if (m_head == nullptr)
    return;
  std::lock_guard<spin_lock> g(*m_lock);
  while (m_head != nullptr) {
    promise_base* p = m_head;
    erase(p);
    // Detached: it stays suspended until its runtime destroys it, and forgets this list.
    // ordering: acquire pairs with task_wait_park's release (the box it stored).
    if (p->m_join.load(std::memory_order_acquire) & wait_boxed)
      wait_box(p)->list = nullptr;
    else
      p->m_wait.list_or_box = 0;
  }
}

}  // namespace saturn::detail
