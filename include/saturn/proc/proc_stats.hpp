/// \file
/// What the process layer holds and has done: processes alive now (counted by a scan of
/// the pid table at read time, so spawning and ending a process pay nothing for it) and
/// the supervisors' restarts. metrics' runtime collector renders these.
#pragma once

#include <cstdint>

namespace saturn {

/// A snapshot of the process layer.
struct proc_stats {
  std::uint64_t alive = 0;                ///< processes started and not yet ended
  std::uint64_t slots = 0;                ///< pid-table slots ever handed out (the high-water mark of processes at once, rounded up to 256 per thread)
  std::uint64_t supervisor_restarts = 0;  ///< children restarted by supervisors
  std::uint64_t supervisor_give_ups = 0;  ///< supervisors that ended past their restart intensity
};

/// Reads the counters and scans the pid table (O(slots): ~32 bytes read per slot ever
/// used; about a millisecond per million). Threading: any thread; takes no lock a
/// process takes; does not suspend. `alive` may be off by the processes starting or
/// ending during the scan.
proc_stats process_stats() noexcept;

}  // namespace saturn
