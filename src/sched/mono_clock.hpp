// CLOCK_MONOTONIC in nanoseconds, for the scheduler's own bookkeeping (park times, stall
// watchdog, dumps, stats). Real time always, unlike saturn::clock (virtual under a
// simulation): these figures describe the machine, not the program. Any thread.
#pragma once

#include <cstdint>
#include <ctime>

namespace saturn::detail {

/// CLOCK_MONOTONIC, ns (a vDSO read).
inline std::int64_t mono_ns() noexcept {
  ::timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// CLOCK_MONOTONIC_COARSE, ns (a few ns to read, a scheduler tick of resolution).
inline std::int64_t coarse_mono_ns() noexcept {
  ::timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace saturn::detail
