/// \file
/// `metrics::histogram`: observations counted into buckets by upper bound (Prometheus
/// type histogram: `_bucket{le="..."}` cumulative, `_sum`, `_count`).
///
///     saturn::metrics::histogram& sizes = saturn::metrics::registry::global().histogram(
///         "myapp_upload_bytes", "Upload sizes", {1024, 65536, 1048576});
///     sizes.observe(4096);
#pragma once

#include <saturn/metrics/detail/cells.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace saturn::metrics {

class registry;

/// A histogram made by registry::histogram; lives as long as its registry.
///
/// Threading: observe() from any thread, at the cost of a binary search over the bounds
/// and two plain adds to the calling thread's own cells (its bucket and the sum; as
/// counter::inc, no lock and no read-modify-write). snapshot() from any thread. Never
/// suspends.
class histogram {
 public:
  /// Counts `v` in the first bucket whose bound is >= v (NaN and values past the last
  /// bound: the +Inf bucket) and adds it to the sum. Any thread.
  void observe(double v) {
    std::size_t i = m_bounds.size();
    if (v <= m_bounds.back())
      i = static_cast<std::size_t>(std::lower_bound(m_bounds.begin(), m_bounds.end(), v) - m_bounds.begin());
    detail::cell* c = &detail::cell_at(m_first);
    detail::cell_add(c[i], 1);
    detail::cell_add_double(c[m_bounds.size() + 1], v);
  }
  /// The upper bounds, ascending (the +Inf bucket is implicit).
  const std::vector<double>& bounds() const noexcept { return m_bounds; }

  /// What a reader sees: cumulative counts per bound (the last one is +Inf, equal to
  /// count), the count and the sum.
  struct snapshot_t {
    std::vector<std::uint64_t> cumulative;
    std::uint64_t count = 0;
    double sum = 0;
  };
  /// Sums every thread's cells. Any thread; takes the cells' lock.
  snapshot_t snapshot() const {
    snapshot_t s;
    s.cumulative.resize(m_bounds.size() + 1);
    detail::sum_cells(m_first, static_cast<std::uint32_t>(m_bounds.size() + 1), s.cumulative.data());
    for (std::size_t i = 1; i < s.cumulative.size(); ++i)
      s.cumulative[i] += s.cumulative[i - 1];
    s.count = s.cumulative.back();
    s.sum = detail::sum_double_cell(m_first + static_cast<std::uint32_t>(m_bounds.size()) + 1);
    return s;
  }

 private:
  friend class registry;
  histogram(std::vector<double> bounds, std::uint32_t first) : m_bounds(std::move(bounds)), m_first(first) {}
  std::vector<double> m_bounds;  // ascending, finite, at least one
  std::uint32_t m_first;         // bucket cells [m_first, m_first + bounds + 1), then the sum
};

}  // namespace saturn::metrics
