#pragma once
/// \file
/// The storage behind counters and histograms: every thread has its own array of 64-bit
/// cells (a "shard"), so an increment is a relaxed load and a relaxed store on a line only
/// that thread writes — no lock, no read-modify-write, no line bouncing between cores. A
/// reader sums one cell over every thread's shard (and over the threads that exited,
/// whose shards were folded into a retired total at their exit).
///
/// A shard is a table of chunks of cells_per_chunk cells, allocated by its thread on the
/// first touch of a chunk; a metric's cells never straddle a chunk, so one lookup finds
/// all of a histogram's cells.

#include <saturn/detail/atomic.hpp>

#include <cstdint>

namespace saturn::metrics::detail {

inline constexpr std::uint32_t cells_per_chunk = 512;  ///< 4 KiB per chunk and thread
inline constexpr std::uint32_t max_chunks = 512;       ///< 262,144 cells in a process

using cell = saturn::detail::atomic<std::uint64_t>;

/// One thread's cells. Chunks are published with a release store (readers acquire).
struct shard {
  saturn::detail::atomic<cell*> chunks[max_chunks];
};

/// constinit: no dynamic initialization, so an access is a plain TLS load (no init-wrapper call).
extern constinit thread_local shard* t_shard;

/// The calling thread's cell `id`, creating its shard or chunk (allocates). Any thread.
cell* cell_slow(std::uint32_t id);

/// The calling thread's cell `id`: a TLS load and two array loads. Any thread. Always
/// inlined: as a call from a large function (the HTTP connection task) it cost ~16
/// instructions per counter increment instead of ~8 (measured with callgrind).
[[gnu::always_inline]] inline cell& cell_at(std::uint32_t id) {
  if (shard* s = t_shard) [[likely]] {
    // ordering: relaxed; this thread stored the pointer itself.
    if (cell* c = s->chunks[id / cells_per_chunk].load(std::memory_order_relaxed)) [[likely]]
      return c[id % cells_per_chunk];
  }
  return *cell_slow(id);
}

/// Adds `n` to a cell of the calling thread's own shard. Only this thread writes it, so a
/// load and a store suffice (mov, add, mov on x86-64; no lock prefix).
[[gnu::always_inline]] inline void cell_add(cell& c, std::uint64_t n) noexcept {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

/// Adds `v` to a cell holding a double's bits (a histogram's sum), on the owning thread.
void cell_add_double(cell& c, double v) noexcept;

/// `n` consecutive fresh cells (zero in every thread), within one chunk; those from index
/// `doubles_from` on hold a double's bits (summed as doubles). Throws std::length_error
/// past max_chunks * cells_per_chunk. Any thread; takes the cells' lock.
std::uint32_t allocate_cells(std::uint32_t n, std::uint32_t doubles_from = ~std::uint32_t{0});

/// The sum over every thread, live and exited, of cell `id` (as an integer) or of the
/// cells [first, first + n) into out[0..n). Any thread; takes the cells' lock (a reader's
/// cost: O(threads)); never blocks a writer.
std::uint64_t sum_cell(std::uint32_t id);
void sum_cells(std::uint32_t first, std::uint32_t n, std::uint64_t* out);
/// As sum_cell, for a cell allocated with doubles = true.
double sum_double_cell(std::uint32_t id);

}  // namespace saturn::metrics::detail
