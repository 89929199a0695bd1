// ext:: socket operations and provided-buffer rings. Like submit.cpp: one SQE per
// request, user_data = the operation, no allocation and no syscall here (except the
// registration of a buffer ring, which is a setup step).
#include <saturn/ext/buf_ring.hpp>
#include <saturn/ext/submit_net.hpp>
#include <saturn/loop/event_loop.hpp>

#include <sys/mman.h>

#include <new>

#include "loop/sqe.hpp"
#include "loop/user_data.hpp"
#include "ring/ring.hpp"

namespace saturn {

static_assert(cqe_f_buffer == IORING_CQE_F_BUFFER);
static_assert(cqe_f_more == IORING_CQE_F_MORE);
static_assert(cqe_f_notif == IORING_CQE_F_NOTIF);
static_assert(cqe_buffer_shift == IORING_CQE_BUFFER_SHIFT);

void ext::submit_socket(event_loop& l, operation* op, int domain, int type, int protocol) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_socket>(r, l, op, domain, type, protocol);
  io_uring_prep_socket(sqe, domain, type, protocol, 0);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_accept(event_loop& l, operation* op, int fd, ::sockaddr* addr, ::socklen_t* len, int flags,
                        bool multishot) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_accept>(r, l, op, fd, addr, len, flags, multishot);
  if (multishot)
    io_uring_prep_multishot_accept(sqe, fd, addr, len, flags);
  else
    io_uring_prep_accept(sqe, fd, addr, len, flags);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_connect(event_loop& l, operation* op, int fd, const ::sockaddr* addr, ::socklen_t len) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_connect>(r, l, op, fd, addr, len);
  io_uring_prep_connect(sqe, fd, addr, len);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_recv(event_loop& l, operation* op, int fd, void* buf, unsigned len, int flags) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_recv>(r, l, op, fd, buf, len, flags);
  io_uring_prep_recv(sqe, fd, buf, len, flags);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_recv_provided(event_loop& l, operation* op, int fd, std::uint16_t group, bool multishot,
                               bool poll_first) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_recv_provided>(r, l, op, fd, group, multishot, poll_first);
  if (multishot)
    io_uring_prep_recv_multishot(sqe, fd, nullptr, 0, 0);
  else
    io_uring_prep_recv(sqe, fd, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = group;
  if (poll_first)
    sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_send(event_loop& l, operation* op, int fd, const void* buf, unsigned len, int flags) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_send>(r, l, op, fd, buf, len, flags);
  io_uring_prep_send(sqe, fd, buf, len, flags | MSG_NOSIGNAL);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_send_zc(event_loop& l, operation* op, int fd, const void* buf, unsigned len, int flags) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_send_zc>(r, l, op, fd, buf, len, flags);
  io_uring_prep_send_zc(sqe, fd, buf, len, flags | MSG_NOSIGNAL, 0);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_sendmsg(event_loop& l, operation* op, int fd, const ::msghdr* msg, int flags) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_sendmsg>(r, l, op, fd, msg, flags);
  io_uring_prep_sendmsg(sqe, fd, msg, static_cast<unsigned>(flags | MSG_NOSIGNAL));
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_recvmsg(event_loop& l, operation* op, int fd, ::msghdr* msg, int flags) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_recvmsg>(r, l, op, fd, msg, flags);
  io_uring_prep_recvmsg(sqe, fd, msg, static_cast<unsigned>(flags));
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_shutdown(event_loop& l, operation* op, int fd, int how) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_shutdown>(r, l, op, fd, how);
  io_uring_prep_shutdown(sqe, fd, how);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

bool ext::supports_opcode(const event_loop& l, int opcode) noexcept {
  return detail::loop_internals::ring(l).supports(opcode);
}

namespace {
// One chunk of `count` buffers of `size` bytes; touched lazily (only pages the kernel
// writes cost memory). Null with errno set on failure.
std::byte* map_chunk(unsigned count, unsigned size) noexcept {
  void* mem = ::mmap(nullptr, static_cast<std::size_t>(count) * size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return mem == MAP_FAILED ? nullptr : static_cast<std::byte*>(mem);
}
}  // namespace

std::unique_ptr<buf_ring> ext::make_buf_ring(event_loop& l, std::uint16_t group, unsigned count, unsigned size,
                                             std::error_code& ec, unsigned capacity) {
  ec.clear();
  if (capacity == 0)
    capacity = count;
  const auto pow2 = [](unsigned n) { return n != 0 && (n & (n - 1)) == 0; };
  if (!pow2(count) || !pow2(capacity) || capacity < count || capacity > 32768 ||
      capacity / count > buf_ring::max_chunks || size == 0) {
    ec = std::make_error_code(std::errc::invalid_argument);
    return nullptr;
  }
  const std::size_t ring_bytes = sizeof(io_uring_buf) * capacity;
  // The ring must be page aligned (the kernel pins it).
  void* ring_mem = ::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring_mem == MAP_FAILED) {
    ec = std::error_code(errno, std::system_category());
    return nullptr;
  }
  std::byte* mem = map_chunk(count, size);
  if (mem == nullptr) {
    ec = std::error_code(errno, std::system_category());
    ::munmap(ring_mem, ring_bytes);
    return nullptr;
  }
  auto* br = static_cast<io_uring_buf_ring*>(ring_mem);
  io_uring_buf_ring_init(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uint64_t>(ring_mem);
  reg.ring_entries = capacity;
  reg.bgid = group;
  int r = detail::loop_internals::ring(l).register_buf_ring(reg);
  if (r < 0) {
    ec = std::error_code(-r, std::system_category());
    ::munmap(mem, static_cast<std::size_t>(count) * size);
    ::munmap(ring_mem, ring_bytes);
    return nullptr;
  }
  return std::make_unique<buf_ring>(&detail::loop_internals::ring(l), ring_mem, ring_bytes, mem, group, count, capacity,
                                    size);
}

buf_ring* ext::recv_buffers(event_loop& l, std::error_code& ec) {
  std::unique_ptr<buf_ring>& ring = detail::loop_internals::recv_ring(l);
  if (ring) [[likely]] {
    ec.clear();
    return ring.get();
  }
  ring = make_buf_ring(l, 0, detail::loop_internals::recv_buffer_count(l), detail::loop_internals::recv_buffer_size(l),
                       ec, detail::loop_internals::recv_buffer_max(l));
  return ring.get();
}

std::error_code ext::reset_recv_buffers(event_loop& l, unsigned count, unsigned size, unsigned max_count) {
  std::unique_ptr<buf_ring>& ring = detail::loop_internals::recv_ring(l);
  ring.reset();
  detail::loop_internals::recv_buffer_count(l) = count;
  detail::loop_internals::recv_buffer_size(l) = size;
  unsigned& max = detail::loop_internals::recv_buffer_max(l);
  max = max_count == 0 ? count : max_count;
  std::error_code ec;
  ring = make_buf_ring(l, 0, count, size, ec, max);
  return ec;
}

buf_ring::buf_ring(ring::uring* r, void* ring_mem, std::size_t ring_bytes, std::byte* mem, std::uint16_t group,
                   unsigned count, unsigned capacity, unsigned size) noexcept
    : m_ring(r),
      m_ring_mem(ring_mem),
      m_ring_bytes(ring_bytes),
      m_chunk_shift(static_cast<unsigned>(__builtin_ctz(count))),
      m_chunk_mask(count - 1),
      m_group(group),
      m_count(count),
      m_mapped(count),
      m_capacity(capacity),
      m_size(size) {
  m_chunks[0] = mem;
  for (unsigned i = 0; i < count; ++i)
    put(static_cast<std::uint16_t>(i));
  // ordering: release publishes the entries before the kernel can see the new tail.
  io_uring_smp_store_release(&static_cast<io_uring_buf_ring*>(m_ring_mem)->tail, m_tail);
}

buf_ring::~buf_ring() {
  m_ring->unregister_buf_ring(m_group);
  const std::size_t chunk_bytes = static_cast<std::size_t>(m_chunk_mask + 1) * m_size;
  for (std::byte* c : m_chunks)
    if (c != nullptr)
      ::munmap(c, chunk_bytes);
  ::munmap(m_ring_mem, m_ring_bytes);
}

void buf_ring::put(std::uint16_t bid) noexcept {
  auto* br = static_cast<io_uring_buf_ring*>(m_ring_mem);
  io_uring_buf* b = &br->bufs[m_tail & (m_capacity - 1)];
  b->addr = reinterpret_cast<std::uint64_t>(data(bid));
  b->len = m_size;
  b->bid = bid;
  ++m_tail;
}

void buf_ring::recycle(std::uint16_t bid) noexcept {
  --m_outstanding;
  // Demand fell (a burst of connections is over): keep the buffer out of the ring, so the
  // buffers the kernel cycles through shrink back towards the initial count.
  if (m_count > m_chunk_mask + 1 && m_outstanding < m_count / 8) [[unlikely]] {
    if (!m_parked)
      m_parked.reset(new (std::nothrow) std::uint16_t[m_capacity]);
    if (m_parked) {
      m_parked[m_mapped - m_count] = bid;
      --m_count;
      return;
    }
  }
  put(bid);
  // ordering: release publishes the entry before the kernel can see the new tail.
  io_uring_smp_store_release(&static_cast<io_uring_buf_ring*>(m_ring_mem)->tail, m_tail);
}

bool buf_ring::grow_if_dry() noexcept {
  const unsigned chunk = m_chunk_mask + 1;
  // Not dry any more: buffers came back, or the ring grew, since the kernel found it empty
  // (one burst ends many receives with -ENOBUFS; only the first should grow it).
  if (m_count - m_outstanding > chunk / 8 || m_count >= m_capacity)
    return false;
  unsigned added = 0;
  if (m_mapped > m_count) {  // parked buffers first: no new memory
    for (; added < chunk && m_mapped > m_count; ++added) {
      put(m_parked[m_mapped - m_count - 1]);
      ++m_count;
    }
  } else {
    std::byte* mem = map_chunk(chunk, m_size);
    if (mem == nullptr)
      return false;  // out of memory: receives keep falling back to their spare buffers
    m_chunks[m_mapped >> m_chunk_shift] = mem;
    for (; added < chunk; ++added)
      put(static_cast<std::uint16_t>(m_mapped + added));
    m_mapped += chunk;
    m_count += chunk;
  }
  // ordering: release publishes the entries before the kernel can see the new tail.
  io_uring_smp_store_release(&static_cast<io_uring_buf_ring*>(m_ring_mem)->tail, m_tail);
  return true;
}

}  // namespace saturn
