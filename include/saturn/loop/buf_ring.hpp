/// \file
/// `buf_ring`: a ring of provided buffers registered with one loop's io_uring
/// (IORING_REGISTER_PBUF_RING). A receive submitted with the ring's group picks a free
/// buffer itself when data arrives, so a multishot receive needs no buffer per
/// connection: memory is spent only on data that is actually in flight.
///
/// Threading: owned by one event_loop and used only on that loop's thread (the ring's
/// tail is written by this thread only; the kernel reads it).
/// Lifetime: the loop destroys it after its in-flight operations are drained, so the
/// kernel never writes a buffer that was freed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace saturn {

namespace ring {
class uring;
}

/// CQE flag bits the socket layer needs (checked against liburing in src/loop).
inline constexpr unsigned cqe_f_buffer = 1u << 0;  ///< the CQE carries a buffer id in flags >> 16
inline constexpr unsigned cqe_f_more = 1u << 1;    ///< a multishot operation stays armed
inline constexpr unsigned cqe_f_notif = 1u << 3;   ///< a zero-copy send's buffer-release notification
inline constexpr unsigned cqe_buffer_shift = 16;   ///< buffer id position in the CQE flags

/// A registered provided-buffer ring: `count` buffers of `size` bytes each, group `group`.
class buf_ring {
 public:
  /// Use event_loop::make_buf_ring (registration needs the loop's ring).
  buf_ring(ring::uring* r, void* ring_mem, std::size_t ring_bytes, std::byte* mem, std::size_t mem_bytes,
           std::uint16_t group, unsigned count, unsigned size) noexcept;
  /// Unregisters the ring and frees its memory. Loop thread; no receive may be in flight.
  ~buf_ring();
  buf_ring(const buf_ring&) = delete;
  buf_ring& operator=(const buf_ring&) = delete;

  /// The buffer group id receives name (sqe->buf_group).
  std::uint16_t group() const noexcept { return m_group; }
  /// Number of buffers (a power of two).
  unsigned count() const noexcept { return m_count; }
  /// Bytes per buffer.
  unsigned buffer_size() const noexcept { return m_size; }
  /// The memory of buffer `bid` (as named by a CQE: flags >> cqe_buffer_shift).
  std::byte* data(std::uint16_t bid) const noexcept { return m_mem + static_cast<std::size_t>(bid) * m_size; }
  /// Hands buffer `bid` back to the kernel. Loop thread only; every buffer a CQE handed
  /// out must be recycled exactly once.
  void recycle(std::uint16_t bid) noexcept;
  /// Buffers currently handed out by the kernel and not yet recycled (for tests).
  unsigned outstanding() const noexcept { return m_outstanding; }
  /// Records that the kernel handed out a buffer (called by the receive paths).
  void note_taken() noexcept { ++m_outstanding; }

 private:
  ring::uring* m_ring;
  void* m_ring_mem;
  std::size_t m_ring_bytes;
  std::byte* m_mem;
  std::size_t m_mem_bytes;
  std::uint16_t m_group;
  std::uint16_t m_tail = 0;
  unsigned m_count;
  unsigned m_size;
  unsigned m_outstanding = 0;
};

}  // namespace saturn
