/// \file
/// Fault injection below the loop, for tests: an interposed ring that makes chosen
/// operations fail the way the kernel can, so every layer's failure paths can be driven
/// with a fixed seed and randomized sequences.
///
/// While a `fault_scope` lives, every ring set up in the process (an event_loop, a
/// runtime, a thread_pool's workers) gets the plan. Before each submission to the kernel
/// the ring looks at the operations about to go in and, by the plan's dice, either
///   * turns one into a failure — the SQE becomes a NOP that never touches its fd or
///     buffers, and its completion carries the chosen -errno (exactly what a failed
///     operation looks like from above: nothing was read, written, accepted or opened), or
///   * makes a read/write/recv/send short — the kernel really moves fewer bytes (the SQE's
///     length is cut), so the data stream stays exact and only the count differs.
/// A plan can also make ring setup fail (ENOMEM), the way a memory-starved kernel does.
/// CQ overflow needs no injection: ask for a small `cq_entries` and keep many in flight.
///
/// Operations of the loop's own machinery (cancels, linked timeouts, MSG_RING wakes, the
/// loop's wake read) are never touched. Without a scope the cost is one predicted branch
/// per submission and per reap.
///
/// Threading: construct and destroy a scope on one thread while no ring is being set up
/// elsewhere; the rings that picked the plan up may run on any threads (each has its own
/// random stream, seeded from the plan's seed and its creation order). Stats are atomic.
#pragma once

#include <array>
#include <saturn/detail/atomic.hpp>
#include <cstdint>
#include <memory>
#include <vector>

namespace saturn::testing {

/// The kinds of operation a fault rule can target.
enum class op_kind : std::uint8_t {
  nop, read, write, recv, send, accept, connect, open, close, statx, fsync, timeout, count_
};

/// One rule: operations of `kind` fail with `error` (a positive errno, e.g. ECONNRESET)
/// with probability `probability`; `error == 0` means "make it short" instead (read,
/// write, recv, send only; an operation of length 1 cannot be made shorter). ENOBUFS is
/// only injected where the kernel can return it: into operations that select a provided
/// buffer (a multishot receive).
struct fault_rule {
  op_kind kind;
  int error;
  double probability;
};

/// What to inject.
struct fault_plan {
  std::uint64_t seed = 1;
  std::vector<fault_rule> rules{};
  /// Non-zero: the next `setup_failures` ring setups fail with this errno (e.g. ENOMEM).
  int setup_error = 0;
  int setup_failures = 0;
  /// Operations skipped (never faulted) before injection starts, per ring: lets a test
  /// get its sockets and files set up first.
  std::uint64_t skip_first = 0;
};

/// Counts of what was injected, per kind. Threading: read from any thread.
struct fault_stats {
  std::array<saturn::detail::atomic<std::uint64_t>, static_cast<std::size_t>(op_kind::count_)> errors{};
  std::array<saturn::detail::atomic<std::uint64_t>, static_cast<std::size_t>(op_kind::count_)> shorts{};
  saturn::detail::atomic<std::uint64_t> setup_failures{0};
  saturn::detail::atomic<std::uint64_t> seen{0};  ///< operations the injector looked at

  std::uint64_t errors_of(op_kind k) const noexcept { return errors[static_cast<std::size_t>(k)].load(); }
  std::uint64_t shorts_of(op_kind k) const noexcept { return shorts[static_cast<std::size_t>(k)].load(); }
  std::uint64_t total_errors() const noexcept;
  std::uint64_t total_shorts() const noexcept;
};

/// The shared state of an installed plan (rings hold it alive). Internal to saturn.
struct fault_state {
  fault_plan plan;
  fault_stats stats;
  saturn::detail::atomic<std::uint64_t> rings{0};
  saturn::detail::atomic<int> setup_failures_left{0};
};

/// Installs `plan` for rings set up while the scope lives (see the file comment).
/// Scopes do not nest: constructing one while another lives is a programming error
/// (std::logic_error).
class fault_scope {
 public:
  explicit fault_scope(fault_plan plan);
  ~fault_scope();
  fault_scope(const fault_scope&) = delete;
  fault_scope& operator=(const fault_scope&) = delete;

  /// What was injected so far (also by rings that outlive the scope).
  const fault_stats& stats() const noexcept { return m_state->stats; }

 private:
  std::shared_ptr<fault_state> m_state;
};

/// The plan rings set up now would get (nullptr: none). Used by src/ring.
std::shared_ptr<fault_state> current_fault_state() noexcept;

}  // namespace saturn::testing
