/// \file
/// The coroutine-frame allocator: per-thread size-class free lists over bump-allocated
/// chunks, so creating a task costs a pointer pop rather than a malloc.
///
/// Why hand-written: glibc's tcache keeps only 7 blocks per size, so a burst of a million
/// spawns falls through to the slower bins; frames need no per-block header (C++ sized
/// deallocation gives the size back), which keeps a suspended task small
/// (docs/decisions/task-frame-size.md).
///
/// Cross-thread frees are safe: a frame freed on another thread goes onto that thread's
/// list. Lists are capped (frame_cache_bytes per class); the excess moves in batches to a global per-class pool that
/// every thread refills from, so a producer/consumer pair of threads cannot grow memory
/// without bound. Chunks are kept for the life of the process (reused, not returned).
///
/// Accounting (task_memory_in_use) costs the fast paths nothing: a small frame in use is
/// one that was carved from a chunk and is in no free list. Only the slow path counts
/// (the bytes each thread carves); the list lengths are kept anyway for the caps (as
/// relaxed atomics, so another thread may read them), and a reader computes carved minus
/// listed minus trimmed, under the global lock. (Counting bytes on every allocation and
/// free instead cost 1.1 ns per pair: a chain of load-add-stores through one word.)
/// Sanitizer builds (SATURN_ASAN / SATURN_TSAN) use plain new/delete so the tools see
/// every frame.
#pragma once

#include <saturn/config.hpp>
#include <saturn/detail/atomic.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace saturn::detail {

/// Largest frame served from the size classes; larger ones use operator new.
inline constexpr std::size_t frame_max_small = 512;

void* frame_allocate_slow(std::size_t size);
void frame_register_thread() noexcept;
void frame_deallocate_slow(void* p, std::size_t size) noexcept;

struct frame_node {
  frame_node* next;
};

/// Per-thread state; trivially destructible and constant-initialized (constinit) so a
/// thread_local access stays a plain TLS load.
struct frame_cache {
  frame_node* lists[frame_max_small / 8];
  /// Frames in each list. Written by this thread only (load + store); read by
  /// frame_usage() from any thread.
  atomic<unsigned> counts[frame_max_small / 8];
  char* bump;
  char* bump_end;
  std::size_t bump_pad;  ///< alignment bytes skipped in the current chunk (not a frame)
  /// Bytes of small frames (class sizes) this thread carved from chunks (slow path only).
  /// Written by this thread only (load + store); read by frame_usage() from any thread.
  atomic<std::uint64_t> carved;
  /// Bytes of frames above frame_max_small this thread allocated minus those it freed,
  /// modulo 2^64 (they always take the slow path). Written and read as `carved`.
  atomic<std::uint64_t> large_in_use;
  frame_cache* live_prev;  ///< the list of live threads' caches (under the global lock)
  frame_cache* live_next;
  bool exit_hook;  ///< registered: the thread's exit hands its lists to the global pool
};

extern constinit thread_local frame_cache t_frame_cache;

/// Adds `n` to a byte count of the calling thread's cache (only this thread writes it;
/// slow paths only); nothing when metrics are compiled out (SATURN_METRICS=OFF:
/// frame_usage() reads 0).
inline void frame_count(atomic<std::uint64_t>& c, std::uint64_t n) noexcept {
  // ordering: relaxed; a statistic, read by frame_usage() with the same tolerance.
  if constexpr (config::metrics)
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

/// Adds `d` (modulo 2^32) to a list length of the calling thread's cache. Owner only.
inline void frame_list_add(atomic<unsigned>& n, unsigned d) noexcept {
  // ordering: relaxed; only the owner writes, frame_usage() reads it as a statistic.
  n.store(n.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

/// Size classes are 8 bytes apart. A frame whose size is an odd multiple of 8 needs no
/// more than 8-byte alignment (an object's size is a multiple of its alignment), so it is
/// carved on an 8-byte boundary; every other class is carved 16-byte aligned. Coarser
/// classes would round common frames up, wasting bytes in every suspended task
/// (docs/decisions/task-frame-size.md).
inline constexpr unsigned frame_class(std::size_t size) noexcept { return static_cast<unsigned>((size - 1) >> 3); }
/// The bytes a frame of class `cls` occupies.
inline constexpr std::size_t frame_class_size(unsigned cls) noexcept { return (std::size_t{cls} + 1) * 8; }

/// A thread keeps at most this many bytes of free frames per class; a free past it hands
/// half to the global pool. Bounded in bytes, not frames, because the frames a thread
/// frees but never allocates (tasks spawned on one worker, finished on another) sit in
/// its list: with a count cap of 4096, two workers stranded ~1 MB per class each and a
/// long HTTP soak's RSS crept up by that much before levelling off.
inline constexpr std::size_t frame_cache_bytes = 64 * 1024;

/// The per-class caps in frames (frame_cache_bytes / class size, at least 64), as a table:
/// a frame freed with a size the compiler cannot see would otherwise pay a division.
inline constexpr auto frame_caps = [] {
  std::array<unsigned, frame_max_small / 8> caps{};
  for (unsigned cls = 0; cls < caps.size(); ++cls) {
    const std::size_t n = frame_cache_bytes / frame_class_size(cls);
    caps[cls] = n < 64 ? 64u : static_cast<unsigned>(n);
  }
  return caps;
}();
/// The per-class cap in frames.
inline constexpr unsigned frame_cap(unsigned cls) noexcept { return frame_caps[cls]; }

/// Allocates a coroutine frame of `size` bytes. Any thread.
inline void* frame_allocate(std::size_t size) {
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
  return ::operator new(size);
#else
  if (size <= frame_max_small) [[likely]] {
    frame_cache& c = t_frame_cache;
    const unsigned cls = frame_class(size);
    if (frame_node* n = c.lists[cls]) [[likely]] {
      c.lists[cls] = n->next;
      frame_list_add(c.counts[cls], ~0u);  // -1
      return n;
    }
  }
  return frame_allocate_slow(size);
#endif
}

/// Frees a frame allocated with frame_allocate(size). Any thread.
inline void frame_deallocate(void* p, std::size_t size) noexcept {
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
  (void)size;
  ::operator delete(p);
#else
  if (size <= frame_max_small) [[likely]] {
    frame_cache& c = t_frame_cache;
    if (!c.exit_hook) [[unlikely]]
      frame_register_thread();  // a thread that only frees must still hand its lists back
    const unsigned cls = frame_class(size);
    if (c.counts[cls].load(std::memory_order_relaxed) < frame_cap(cls)) [[likely]] {
      auto* n = static_cast<frame_node*>(p);
      n->next = c.lists[cls];
      c.lists[cls] = n;
      frame_list_add(c.counts[cls], 1);
      return;
    }
  }
  frame_deallocate_slow(p, size);
#endif
}

/// Gives the memory of frame chunks whose every frame is free back to the kernel
/// (munmap), like malloc_trim: call it after a burst of tasks or processes has ended (e.g.
/// after a thread_pool is destroyed, whose workers' free lists then sit in the global
/// pool). Frames cached in other live threads' lists keep their chunks. Returns the bytes
/// released. Threading: any thread; takes the global pool's lock; O(free frames).
std::size_t frame_trim() noexcept;

/// Bytes of frame chunks currently mapped (free or in use). Any thread; takes the lock.
std::size_t frame_mapped_bytes() noexcept;

/// Bytes of coroutine frames allocated and not yet freed.
struct frame_usage_bytes {
  std::size_t small = 0;  ///< frames carved from the chunks, at their class size (at most the mapped bytes)
  std::size_t large = 0;  ///< frames above frame_max_small, from operator new
};
/// Carved minus listed minus trimmed bytes, over every thread, live and exited. Any
/// thread; takes the global lock (O(live threads + pooled batches)). Approximate while
/// frames are being allocated and freed (each thread's counts are read at a slightly
/// different instant); 0 in sanitizer builds.
frame_usage_bytes frame_usage() noexcept;

}  // namespace saturn::detail

namespace saturn {
/// Returns the memory of fully free coroutine-frame chunks to the kernel; see
/// detail::frame_trim. Any thread.
inline std::size_t trim_task_memory() noexcept { return detail::frame_trim(); }
/// Bytes the coroutine-frame allocator has mapped (in use or cached free), for memory
/// accounting next to malloc's own statistics. Any thread.
inline std::size_t task_memory_mapped() noexcept { return detail::frame_mapped_bytes(); }
/// Bytes of coroutine frames alive now (tasks and processes not yet destroyed), those
/// carved from the mapped chunks at their 8-byte size class; task_memory_mapped() minus
/// this is what the allocator caches. Any thread; see detail::frame_usage.
inline std::size_t task_memory_in_use() noexcept { return detail::frame_usage().small; }
}  // namespace saturn
