/// \file
/// `buf_ring`: a ring of provided buffers registered with one loop's io_uring
/// (IORING_REGISTER_PBUF_RING). A receive submitted with the ring's group picks a free
/// buffer itself when data arrives, so a multishot receive needs no buffer per
/// connection: memory is spent only on data that is actually in flight.
///
/// Growing and shrinking: the ring is registered with room for `capacity` buffers but
/// starts with `count` of them. The kernel hands buffers out in ring order, so every
/// buffer in circulation cycles through the cache: few buffers keep a bulk stream's
/// copies in warm memory. Many connections receiving at once need more buffers than that,
/// and a receive that finds the ring empty ends with -ENOBUFS and must be re-armed (extra
/// kernel round trips a message when it happens every time). So when a receive finds the
/// ring dry while the buffers really are all out, grow_if_dry() puts `count` more into
/// circulation (mapping a new chunk, or taking back parked buffers), up to `capacity`.
/// When demand falls (fewer than an eighth of the buffers in circulation are handed out),
/// recycle() parks the returned buffer instead of giving it back to the kernel, down to
/// `count` in circulation, so a bulk stream after a burst of connections cycles through a
/// small set again. Parked memory stays mapped (its pages stay resident once touched).
///
/// Threading: owned by one event_loop and used only on that loop's thread (the ring's
/// tail is written by this thread only; the kernel reads it).
/// Lifetime: the loop destroys it after its in-flight operations are drained, so the
/// kernel never writes a buffer that was freed.
#pragma once

#include <saturn/ext/operation.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <system_error>

namespace saturn {

class event_loop;

namespace ring {
class uring;
}

/// A registered provided-buffer ring: `count` buffers of `size` bytes each, group `group`,
/// growing by `count` at a time up to `capacity` buffers.
class buf_ring {
 public:
  /// Most chunks of `count` buffers a ring can grow to (capacity / count).
  static constexpr unsigned max_chunks = 64;

  /// Use ext::make_buf_ring (registration needs the loop's ring). `mem` is the first
  /// chunk (count x size bytes, mmapped).
  buf_ring(ring::uring* r, void* ring_mem, std::size_t ring_bytes, std::byte* mem, std::uint16_t group, unsigned count,
           unsigned capacity, unsigned size) noexcept;
  /// Unregisters the ring and frees its memory. Loop thread; no receive may be in flight.
  ~buf_ring();
  buf_ring(const buf_ring&) = delete;
  buf_ring& operator=(const buf_ring&) = delete;

  /// The buffer group id receives name (sqe->buf_group).
  std::uint16_t group() const noexcept { return m_group; }
  /// Buffers in circulation: in the ring or handed out (at least the initial count).
  unsigned count() const noexcept { return m_count; }
  /// Buffers mapped so far, in circulation or parked (a multiple of the initial count).
  unsigned mapped() const noexcept { return m_mapped; }
  /// Most buffers the ring grows to (a power of two).
  unsigned capacity() const noexcept { return m_capacity; }
  /// Bytes per buffer.
  unsigned buffer_size() const noexcept { return m_size; }
  /// The memory of buffer `bid` (as named by a CQE: flags >> cqe_buffer_shift).
  std::byte* data(std::uint16_t bid) const noexcept {
    return m_chunks[bid >> m_chunk_shift] + static_cast<std::size_t>(bid & m_chunk_mask) * m_size;
  }
  /// Called when a receive found the ring empty (-ENOBUFS). If nearly every buffer is
  /// handed out (not an -ENOBUFS from before the last recycle or growth) and fewer than
  /// `capacity` are in circulation, puts one chunk more into circulation (parked buffers
  /// first, else a newly mapped chunk) and returns true. Loop thread only.
  bool grow_if_dry() noexcept;
  /// Hands buffer `bid` back to the kernel. Loop thread only; every buffer a CQE handed
  /// out must be recycled exactly once.
  void recycle(std::uint16_t bid) noexcept;
  /// Buffers currently handed out by the kernel and not yet recycled (for tests).
  unsigned outstanding() const noexcept { return m_outstanding; }
  /// Records that the kernel handed out a buffer (called by the receive paths).
  void note_taken() noexcept { ++m_outstanding; }

 private:
  /// Writes buffer `bid` at the ring's tail (publish with the release store of the tail).
  void put(std::uint16_t bid) noexcept;

  ring::uring* m_ring;
  void* m_ring_mem;
  std::size_t m_ring_bytes;
  std::byte* m_chunks[max_chunks] = {};  ///< chunk k holds buffers [k * chunk, (k + 1) * chunk)
  unsigned m_chunk_shift;                ///< log2(buffers per chunk)
  unsigned m_chunk_mask;                 ///< buffers per chunk - 1
  std::uint16_t m_group;
  std::uint16_t m_tail = 0;
  unsigned m_count;   ///< in circulation
  unsigned m_mapped;  ///< in circulation + parked
  unsigned m_capacity;
  std::unique_ptr<std::uint16_t[]> m_parked;  ///< capacity slots; the first m_mapped - m_count hold parked ids
  unsigned m_size;
  unsigned m_outstanding = 0;
};

namespace ext {

/// Registers a new provided-buffer ring of `count` (power of two) buffers of `size` bytes
/// as group `group` on `loop`, with room to grow to `capacity` (power of two, <= 32768, at
/// most 64 x count; 0: count, a fixed ring). Null with `ec` set when the kernel refuses or
/// the sizes are invalid. Loop thread only; a setup step (one registration syscall),
/// never suspends. The ring must be destroyed on the loop thread before the loop.
std::unique_ptr<buf_ring> make_buf_ring(event_loop& loop, std::uint16_t group, unsigned count, unsigned size,
                                        std::error_code& ec, unsigned capacity = 0);
/// The loop's own receive buffers (group 0; created on first use with the sizes from
/// loop_options; the loop owns them). Null with `ec` set when they cannot be registered.
/// Loop thread only; never suspends.
buf_ring* recv_buffers(event_loop& loop, std::error_code& ec);
/// Replaces the loop's receive buffers (for tests: a tiny ring runs dry), growing to
/// `max_count` (0: a fixed ring of `count`). Only while no receive uses them (no stream
/// received on this loop yet, or all closed and drained). Loop thread only.
std::error_code reset_recv_buffers(event_loop& loop, unsigned count, unsigned size, unsigned max_count = 0);

}  // namespace ext

}  // namespace saturn
