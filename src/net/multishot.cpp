// multishot_source and ms_await: see the protocol in include/saturn/net/detail/multishot.hpp.
#include <saturn/ext/buf_ring.hpp>
#include <saturn/ext/exit_hook.hpp>
#include <saturn/ext/submit.hpp>
#include <saturn/ext/submit_net.hpp>
#include <saturn/net/detail/multishot.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <new>

namespace saturn::net::detail {

multishot_source::multishot_source(kind k, int fd, unsigned limit) noexcept : m_limit(limit), m_fd(fd), m_kind(k) {
  m_complete = &on_cqe;
  m_on_loop_exit = &on_loop_exit;
}

multishot_source::~multishot_source() {
  if (m_owner != nullptr)
    ext::remove_exit_hook(*m_owner, this);  // on the owner thread: every delete happens there
}

void multishot_source::on_loop_exit(loop_exit_hook* h) noexcept {
  auto* s = static_cast<multishot_source*>(h);
  // Every operation has completed (the loop drained its I/O); the buffer ring goes next.
  if (s->m_kind == kind::accept)
    while (s->m_count > 0)
      s->drop(s->pop());
  s->m_count = 0;
  s->m_head = 0;
  s->m_held = -1;
  s->m_spare_held = false;
  s->m_spare_recv = false;
  s->m_waiter = nullptr;
  s->m_armed = false;
  s->m_paused = false;
  s->m_owner = nullptr;
  s->m_bufs = nullptr;
}

event_loop* multishot_source::bind_owner(event_loop* cur) noexcept {
  if (m_owner == nullptr && cur != nullptr) {
    m_owner = cur;
    ext::add_exit_hook(*cur, this);
    if (m_kind == kind::recv) {
      std::error_code ec;
      m_bufs = ext::recv_buffers(*cur, ec);
      if (m_bufs == nullptr)
        m_setup_error = ec.value() != 0 ? ec.value() : ENOBUFS;
    }
  }
  return m_owner;
}

void multishot_source::arm(bool poll_first) noexcept {
  m_armed = true;
  if (m_kind == kind::recv)
    ext::submit_recv_provided(*m_owner, this, m_fd, m_bufs->group(), true, poll_first);
  else
    ext::submit_accept(*m_owner, this, m_fd, nullptr, nullptr, SOCK_CLOEXEC, true);
}

void multishot_source::arm_spare() noexcept {
  const unsigned size = m_bufs->buffer_size();
  if (!m_spare)
    m_spare.reset(new (std::nothrow) std::byte[size]);
  if (!m_spare) {  // out of memory too: wait for a ring buffer as before
    arm(true);
    return;
  }
  m_armed = true;
  m_spare_recv = true;
  ext::submit_recv(*m_owner, this, m_fd, m_spare.get(), size, 0);
}

void multishot_source::push(ms_item it) {
  if (m_count == m_queue.size()) {
    // Grow (rare: the pause bounds a receive queue; accepts come in bursts).
    std::vector<ms_item> bigger(m_queue.empty() ? 8 : m_queue.size() * 2);
    for (unsigned i = 0; i < m_count; ++i)
      bigger[i] = m_queue[(m_head + i) % m_queue.size()];
    m_queue.swap(bigger);
    m_head = 0;
  }
  m_queue[(m_head + m_count) % m_queue.size()] = it;
  ++m_count;
}

ms_item multishot_source::pop() noexcept {
  ms_item it = m_queue[m_head];
  m_head = (m_head + 1) % static_cast<unsigned>(m_queue.size());
  --m_count;
  return it;
}

void multishot_source::hand_out(ms_item it) noexcept {
  if (m_kind == kind::recv && (it.flags & cqe_f_buffer) != 0)
    m_held = static_cast<std::int32_t>(it.flags >> cqe_buffer_shift);
  else if ((it.flags & ms_f_spare) != 0)
    m_spare_held = true;
}

void multishot_source::drop(ms_item it) noexcept {
  if (m_kind == kind::recv) {
    if ((it.flags & cqe_f_buffer) != 0)
      m_bufs->recycle(static_cast<std::uint16_t>(it.flags >> cqe_buffer_shift));
  } else if (it.res >= 0) {
    ::close(it.res);
  }
}

bool multishot_source::try_take(ms_item& out) noexcept {
  if (m_held >= 0) {
    m_bufs->recycle(static_cast<std::uint16_t>(m_held));
    m_held = -1;
  }
  if (m_spare_held) [[unlikely]] {  // the ring ran dry before: give the spare back too
    m_spare_held = false;
    m_spare.reset();
  }
  if (m_setup_error != 0) [[unlikely]] {
    out = ms_item{-m_setup_error, 0};
    return true;
  }
  if (m_count > 0) {
    out = pop();
    hand_out(out);
    if (!m_armed && !m_eof && m_count <= m_limit / 2)
      arm(false);
    return true;
  }
  if (m_eof) {
    out = ms_item{0, 0};
    return true;
  }
  if (!m_armed)
    arm(false);
  return false;
}

void multishot_source::on_cqe(operation* op, int res, unsigned flags) noexcept {
  auto* s = static_cast<multishot_source*>(op);
  const bool more = (flags & cqe_f_more) != 0;
  if (!more)
    s->m_armed = false;
  if (s->m_spare_recv) {  // the one-shot recv into the spare buffer
    s->m_spare_recv = false;
    flags = res > 0 ? ms_f_spare : 0;
  } else if (s->m_kind == kind::recv && (flags & cqe_f_buffer) != 0) {
    s->m_bufs->note_taken();
    if (res <= 0) {  // no data in it: give it straight back
      s->m_bufs->recycle(static_cast<std::uint16_t>(flags >> cqe_buffer_shift));
      flags &= ~cqe_f_buffer;
    }
  }
  if (s->m_closing) {
    s->drop(ms_item{res, flags});
    if (!s->m_armed)
      delete s;
    return;
  }
  if (res == -ENOBUFS) {
    s_dry.fetch_add(1, std::memory_order_relaxed);
    if (s->m_bufs != nullptr)
      s->m_bufs->grow_if_dry();  // more connections receive at once than it has buffers
  }
  const bool swallow = !more && (res == -ENOBUFS || (res == -ECANCELED && s->m_paused));
  if (!more)
    s->m_paused = false;
  if (!swallow) {
    if (s->m_kind == kind::recv && res == 0)
      s->m_eof = true;
    if (s->m_waiter != nullptr && s->m_count == 0) {
      ms_await* w = s->m_waiter;
      s->m_waiter = nullptr;
      s->hand_out(ms_item{res, flags});
      w->deliver(ms_item{res, flags});
    } else {
      s->push(ms_item{res, flags});
    }
  }
  if (!s->m_armed && s->m_waiter != nullptr && s->m_count == 0 && !s->m_eof) {
    if (res == -ENOBUFS && s->m_kind == kind::recv)
      s->arm_spare();  // bytes are waiting and the ring is empty: take them without it
    else
      s->arm(false);
  }
  else if (s->m_armed && !s->m_paused && s->m_count >= s->m_limit) {
    s->m_paused = true;  // the consumer lags: stop taking buffers until it catches up
    ext::submit_cancel(*s->m_owner, s);
  }
}

void multishot_source::close() noexcept {
  event_loop* cur = event_loop::current();
  if (m_owner == nullptr || cur == m_owner) {
    close_on_owner();
    return;
  }
  m_close_node.self = this;
  m_close_node.m_fn = &on_close_posted;
  m_owner->post_remote(&m_close_node);
}

void multishot_source::on_close_posted(runnable* r, run_mode mode) noexcept {
  multishot_source* s = static_cast<close_node*>(r)->self;
  if (mode == run_mode::discard) {
    // The loop is going away; its I/O was drained first, so nothing is armed any more.
    if (!s->m_armed)
      delete s;
    return;
  }
  s->close_on_owner();
}

void multishot_source::close_on_owner() noexcept {
  m_closing = true;
  if (m_owner == nullptr) {  // never used, or orphaned by its loop's destruction
    delete this;
    return;
  }
  if (m_waiter != nullptr) {
    ms_await* w = m_waiter;
    m_waiter = nullptr;
    w->deliver(ms_item{-ECANCELED, 0});
  }
  if (m_held >= 0) {
    m_bufs->recycle(static_cast<std::uint16_t>(m_held));
    m_held = -1;
  }
  m_spare_held = false;  // m_spare itself goes with the source (a recv may still write it)
  while (m_count > 0)
    drop(pop());
  if (!m_armed) {
    delete this;
    return;
  }
  // lifetime: freed by on_cqe on the final CQE of the cancelled operation.
  ext::submit_cancel(*m_owner, this);
}

// ---- ms_await

bool ms_await::suspend(saturn::detail::promise_base* p) noexcept {
  m_waiting = p;
  if (p->token().stop_requested()) {
    m_item = ms_item{-ECANCELED, 0};
    return false;
  }
  event_loop* cur = event_loop::current();
  event_loop* owner = m_src->bind_owner(cur);
  if (owner == cur)
    return suspend_on_owner();
  // The task runs on another worker than the source's loop: continue there.
  m_hop.self = this;
  m_hop.m_fn = &run_hop;
  // lifetime: after post_remote this await belongs to the owner thread; touch nothing.
  owner->post_remote(&m_hop);
  return true;
}

bool ms_await::suspend_on_owner() noexcept {
  if (m_src->try_take(m_item))
    return false;
  m_src->set_waiter(this);
  if (m_timeout.count() > 0) [[unlikely]] {
    // Before arm_cancellation, which may cancel at once (and then disarms this timer).
    m_timer.self = this;
    m_timer.m_fire = &on_timer;
    m_src->owner()->add_timer(&m_timer, clock::now() + m_timeout);
  }
  this->arm_cancellation(m_waiting, m_src->owner());
  return true;
}

void ms_await::on_timer(timer_node* t, run_mode mode) noexcept {
  ms_await* self = static_cast<wait_timer*>(t)->self;
  if (mode != run_mode::run)
    return;  // the loop is going away: its exit hook drops the waiter
  self->m_src->remove_waiter(self);
  self->m_item = ms_item{-ETIMEDOUT, ms_f_timeout};
  if (self->complete_may_resume())
    self->m_waiting->wake();
}

void ms_await::run_hop(runnable* r, run_mode mode) noexcept {
  ms_await* self = static_cast<hop_node*>(r)->self;
  if (mode == run_mode::discard)
    return;  // the loop is being destroyed; the task's frame is destroyed by its scheduler
  if (!self->suspend_on_owner())
    self->m_waiting->wake();
}

void ms_await::deliver(ms_item it) noexcept {
  disarm_timer();
  m_item = it;
  if (this->complete_may_resume())
    m_waiting->wake();
}

void ms_await::cancel_now() noexcept {
  disarm_timer();
  m_src->remove_waiter(this);
  m_item = ms_item{-ECANCELED, 0};
  if (this->complete_may_resume())
    m_waiting->wake();
}

}  // namespace saturn::net::detail
