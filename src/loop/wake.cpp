// Cross-thread hand-off and wake-up.
//
// Wake protocol. The loop announces a sleep by storing m_sleeping = true (seq_cst) and
// then re-reads the remote queue (seq_cst); only if it is still empty does it enter the
// kernel to wait. A producer pushes onto the remote queue (seq_cst CAS), then reads
// m_sleeping (seq_cst). In the single total order of seq_cst operations one of the two
// reads sees the other's write, so either the loop finds the work or the producer sees
// the sleep. Only a producer that flips m_sleeping from true to false sends the wake, so
// a burst of hand-offs costs one wake-up, and a loop that is awake costs producers no
// syscall at all (the limits file: a cross-CPU wake is 20–50 µs on this VM).
//
// The wake itself: from a thread that runs a loop of its own, an IORING_OP_MSG_RING SQE
// aimed at our ring (the cheapest cross-CPU wake measured here, between DEFER_TASKRUN
// rings); from any other thread, a write to the loop's eventfd, which the loop keeps an
// IORING_OP_READ armed on while it sleeps.
#include <saturn/loop/event_loop.hpp>

#include <unistd.h>

#include <cstdint>

#include "loop/hand_off.hpp"
#include "loop/user_data.hpp"
#include "ring/ring.hpp"

namespace saturn {

void event_loop::arm_wake_read() {
  io_uring_sqe* sqe = m_ring->get_sqe();
  io_uring_prep_read(sqe, m_wake_fd, &m_wake_buf, sizeof m_wake_buf, 0);
  io_uring_sqe_set_data64(sqe, detail::ud_wake_read);
  m_wake_armed = true;
}

void event_loop::post_remote(runnable* r) noexcept {
  detail::hand_off poster(m_remote_posters);
  m_remote.push(r);
  wake();
}

void event_loop::stop() noexcept {
  detail::hand_off poster(m_remote_posters);
  m_stop.store(true, std::memory_order_seq_cst);
  wake();
}

void event_loop::wake() noexcept {
  // ordering: seq_cst read pairs with the loop's seq_cst store (see the protocol above).
  if (!m_sleeping.load(std::memory_order_seq_cst))
    return;
  if (!m_sleeping.exchange(false, std::memory_order_acq_rel))
    return;  // another producer is already waking it
  event_loop* self = current();
  if (self != nullptr && self != this && self->m_ring->feature_set().msg_ring) {
    io_uring_sqe* sqe = self->m_ring->get_sqe();
    io_uring_prep_msg_ring(sqe, m_ring->fd(), 0, detail::ud_msg_wake, 0);
    io_uring_sqe_set_data64(sqe, detail::ud_ignore);
    if (self->m_ring->feature_set().cqe_skip)
      sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    if (self->m_ring->submit_and_get_events() >= 0) {
      return;
    }
  }
  const std::uint64_t one = 1;
  // A full eventfd counter (EAGAIN) still means a wake is pending: nothing is lost.
  [[maybe_unused]] ssize_t n = ::write(m_wake_fd, &one, sizeof one);
}

}  // namespace saturn
