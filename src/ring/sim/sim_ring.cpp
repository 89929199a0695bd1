// A simulated ring's "mapped" memory: the SQ and CQ a real io_uring would share with the
// kernel, here plain memory the simulated kernel reads and writes (kernel.hpp).
#include "ring/sim/kernel.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace saturn::ring {
namespace {
unsigned round_pow2(unsigned n) {
  unsigned p = 1;
  while (p < n)
    p <<= 1;
  return p;
}
}  // namespace

sim_ring::sim_ring(std::shared_ptr<sim_kernel> k, io_uring& ring, unsigned sq_entries, unsigned cq_entries)
    : m_kernel(std::move(k)), m_ring(ring), m_serial(0), m_fd(-1) {
  if (!m_kernel->on_world_thread())
    throw std::logic_error(
        "saturn::sim: a ring was set up on a thread other than the simulation's while a sim::world lives. "
        "A simulation is single-threaded: build the runtime or thread_pool on the world's thread (a "
        "thread_pool made there runs its workers as seed-chosen interleavings on that thread).");
  m_sq_entries = round_pow2(sq_entries);
  m_cq_entries = round_pow2(cq_entries < m_sq_entries ? m_sq_entries : cq_entries);
  m_sq_mask = m_sq_entries - 1;
  m_cq_mask = m_cq_entries - 1;
  m_sqes = std::make_unique<io_uring_sqe[]>(m_sq_entries);
  m_cqes = std::make_unique<io_uring_cqe[]>(m_cq_entries);
  std::memset(&ring, 0, sizeof ring);
  ring.sq.khead = &m_sq_head;
  ring.sq.ktail = &m_sq_tail;
  ring.sq.kring_mask = &m_sq_mask;
  ring.sq.kring_entries = &m_sq_entries;
  ring.sq.kflags = &m_sq_flags;
  ring.sq.kdropped = &m_sq_dropped;
  ring.sq.sqes = m_sqes.get();
  ring.sq.ring_mask = m_sq_mask;
  ring.sq.ring_entries = m_sq_entries;
  ring.cq.khead = &m_cq_head;
  ring.cq.ktail = &m_cq_tail;
  ring.cq.kring_mask = &m_cq_mask;
  ring.cq.kring_entries = &m_cq_entries;
  ring.cq.kflags = &m_cq_flags;
  ring.cq.koverflow = &m_cq_overflow;
  ring.cq.cqes = m_cqes.get();
  ring.cq.ring_mask = m_cq_mask;
  ring.cq.ring_entries = m_cq_entries;
  m_kernel->attach(this);
  ring.ring_fd = m_fd;
  ring.enter_ring_fd = m_fd;
}

sim_ring::~sim_ring() { m_kernel->detach(this); }

int sim_ring::consume() {
  int n = 0;
  sim_op* prev = nullptr;
  const unsigned tail = m_ring.sq.sqe_tail;
  while (m_sq_head != tail) {
    const io_uring_sqe& sqe = m_sqes[m_sq_head & m_sq_mask];
    ++m_sq_head;
    ++n;
    sim_op* op = m_kernel->submit(this, sqe, prev);
    // Only a LINK_TIMEOUT looks back, and only at the op right before it.
    prev = (sqe.flags & IOSQE_IO_LINK) != 0 ? op : nullptr;
  }
  m_ring.sq.sqe_head = tail;
  m_sq_tail = tail;
  return n;
}

int sim_ring::submit() {
  const int n = consume();
  m_kernel->step();
  flush_overflow();
  return n;
}

int sim_ring::enter(unsigned wait_nr, std::int64_t timeout_ns) {
  const int n = submit();
  if (wait_nr == 0)
    return n;
  const std::int64_t deadline = timeout_ns < 0 ? INT64_MAX : m_kernel->now() + timeout_ns;
  const bool got = m_kernel->wait_until(
      [&] {
        flush_overflow();
        return cq_ready() >= wait_nr;
      },
      deadline);
  return got || n > 0 ? n : -ETIME;
}

unsigned sim_ring::cq_ready() const noexcept { return m_cq_tail - m_cq_head; }

void sim_kernel::wait_any(bool (*extra)(void*), void* ctx, std::int64_t deadline) {
  (void)wait_until(
      [&] {
        for (sim_ring* r : m_rings) {
          r->flush_overflow();
          if (r->cq_ready() != 0)
            return true;
        }
        return extra != nullptr && extra(ctx);
      },
      deadline);
}

void sim_ring::post(std::uint64_t user_data, int res, unsigned flags) {
  if (!m_overflow.empty() || cq_ready() >= m_cq_entries) {
    m_overflow.push_back(io_uring_cqe{user_data, res, flags});
    m_sq_flags |= IORING_SQ_CQ_OVERFLOW;
    return;
  }
  m_cqes[m_cq_tail & m_cq_mask] = io_uring_cqe{user_data, res, flags};
  // ordering: the reader is this thread (the simulation is single-threaded).
  ++m_cq_tail;
}

void sim_ring::flush_overflow() noexcept {
  std::size_t i = 0;
  for (; i < m_overflow.size() && cq_ready() < m_cq_entries; ++i) {
    m_cqes[m_cq_tail & m_cq_mask] = m_overflow[i];
    ++m_cq_tail;
  }
  if (i > 0)
    m_overflow.erase(m_overflow.begin(), m_overflow.begin() + static_cast<std::ptrdiff_t>(i));
  if (m_overflow.empty())
    m_sq_flags &= ~IORING_SQ_CQ_OVERFLOW;
}

int sim_ring::register_buf_ring(const io_uring_buf_reg& reg) {
  if (m_groups.count(reg.bgid) != 0)
    return -EEXIST;
  buf_group g;
  g.br = reinterpret_cast<io_uring_buf_ring*>(reg.ring_addr);
  g.entries = reg.ring_entries;
  m_groups.emplace(reg.bgid, g);
  return 0;
}

int sim_ring::unregister_buf_ring(unsigned bgid) { return m_groups.erase(bgid) != 0 ? 0 : -ENOENT; }

}  // namespace saturn::ring
