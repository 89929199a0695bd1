// Timed receive deadlines (see saturn/proc/detail/receive_timer.hpp).
#include <saturn/proc/detail/receive_timer.hpp>
#include <saturn/proc/detail/signals.hpp>

#include <stdexcept>

namespace saturn::detail {

receive_timer* receive_timer::arm(pid target, std::uint32_t seq, clock::time_point deadline) {
  event_loop* loop = event_loop::current();
  if (loop == nullptr)
    throw std::logic_error("saturn: receive_for needs an event loop on this thread (a runtime, or a pool in io mode)");
  auto* t = new receive_timer;
  t->m_target = target;
  t->m_seq = seq;
  t->m_loop = loop;
  t->m_fire = &fire;
  loop->add_timer(t, deadline);
  return t;
}

void receive_timer::release() noexcept {
  // ordering: acq_rel so the last owner sees the other owner's writes before freeing.
  if (m_refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete this;
}

void receive_timer::fire(timer_node* n, run_mode mode) noexcept {
  auto* self = static_cast<receive_timer*>(n);
  if (mode == run_mode::run) {
    try {
      push_timeout(self->m_target, self->m_seq);
    } catch (...) {
      // out of memory: the receive waits for a message instead
    }
  }
  self->release();  // the timer's ref
}

void receive_timer::run_disarm(runnable* r, run_mode) noexcept {
  receive_timer* self = static_cast<disarm_node*>(r)->self;
  if (self->m_loop->cancel_timer(self))
    self->release();  // the timer's ref: it will never fire now
  self->release();    // the receive's ref, handed over with the request
}

void receive_timer::finish() noexcept {
  if (event_loop::current() == m_loop) {
    if (m_loop->cancel_timer(this))
      release();
    release();
    return;
  }
  m_disarm.self = this;
  m_disarm.m_fn = &run_disarm;
  m_loop->post_remote(&m_disarm);
}

}  // namespace saturn::detail
