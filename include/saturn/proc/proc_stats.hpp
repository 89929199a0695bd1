/// \file
/// What the process layer holds and has done: processes alive now (counted by a scan of
/// the pid table at read time, so spawning and ending a process pay nothing for it), the
/// supervisors' restarts, and the deepest mailbox seen. metrics' runtime collector renders these.
#pragma once

#include <cstdint>

namespace saturn {

/// A snapshot of the process layer.
struct proc_stats {
  std::uint64_t alive = 0;                ///< processes started and not yet ended
  std::uint64_t slots = 0;                ///< pid-table slots ever handed out (the high-water mark of processes at once, rounded up to 256 per thread)
  std::uint64_t supervisor_restarts = 0;  ///< children restarted by supervisors
  std::uint64_t supervisor_give_ups = 0;  ///< supervisors that ended past their restart intensity
  /// The most messages (exit signals, downs and receive time-outs included) any process
  /// found waiting in its inbox when it took it, since the program started. A receive
  /// without a predicate takes the inbox only once it has received everything taken
  /// before, so for such a process this is its whole mailbox depth at that moment; the
  /// messages a selective receive skipped (kept aside, still queued) are not counted.
  /// Measured when the process takes its inbox, so a backlog it never takes (it ends or
  /// stays busy) is not seen.
  std::uint64_t mailbox_depth_max = 0;
};

/// Reads the counters and scans the pid table (O(slots): ~32 bytes read per slot ever
/// used; about a millisecond per million). Threading: any thread; takes no lock a
/// process takes; does not suspend. `alive` may be off by the processes starting or
/// ending during the scan.
proc_stats process_stats() noexcept;

}  // namespace saturn
