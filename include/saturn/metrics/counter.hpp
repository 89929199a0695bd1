/// \file
/// `metrics::counter`: a monotonically increasing count (Prometheus type counter).
///
///     saturn::metrics::counter& jobs = saturn::metrics::registry::global().counter(
///         "myapp_jobs_total", "Jobs finished", {{"queue", "a"}});
///     jobs.inc();
#pragma once

#include <saturn/metrics/detail/cells.hpp>

#include <cstdint>

namespace saturn::metrics {

namespace detail {
class cell_binding;
}

class registry;

/// A counter made by registry::counter; lives as long as its registry.
///
/// Threading: inc() from any thread, at the cost of a plain add: each thread adds to its
/// own cell (a relaxed load and store on a line no other thread writes; no lock, no
/// read-modify-write), and value() sums the cells of every thread. The first inc() of a
/// thread allocates its cells (4 KiB per 512 metrics). Never suspends.
class counter {
 public:
  /// Adds `n`. Any thread; never blocks.
  [[gnu::always_inline]] void inc(std::uint64_t n = 1) { detail::cell_add(detail::cell_at(m_cell), n); }
  /// The sum of every thread's increments so far. Any thread; takes the cells' lock
  /// (O(threads)): for a scrape, not a hot path.
  std::uint64_t value() const { return detail::sum_cell(m_cell); }

 private:
  friend class registry;
  friend class detail::cell_binding;
  explicit counter(std::uint32_t cell) noexcept : m_cell(cell) {}
  std::uint32_t m_cell;
};

}  // namespace saturn::metrics
