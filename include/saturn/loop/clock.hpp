/// \file
/// `saturn::clock`: the clock every deadline in saturn is measured on. It is
/// CLOCK_MONOTONIC (std::chrono::steady_clock, read through the vDSO) unless a
/// deterministic simulation (saturn/sim) owns time, when it reads the simulation's
/// virtual clock instead: timers fire in virtual time, and an idle simulated program
/// jumps to its next deadline at once.
///
/// Its own type rather than an alias of steady_clock, so a time_point of saturn::clock
/// cannot be mixed with a steady_clock one by mistake (that would compare virtual with
/// real time in a simulation): the compiler refuses.
///
/// Cost when no simulation runs: one relaxed load of a global and a predicted branch next
/// to the vDSO read (~20 ns); none in a build with SATURN_SIMULATION=OFF.
#pragma once

#include <saturn/config.hpp>
#include <saturn/detail/atomic.hpp>

#include <chrono>
#include <cstdint>
#include <ctime>

namespace saturn {

namespace detail {
/// The virtual time in nanoseconds while a simulation owns time; 0 otherwise. Written only
/// by the simulation (src/ring/sim), on its one thread. Read by clock::now().
extern constinit detail::atomic<std::int64_t> g_virtual_now_ns;
}  // namespace detail

/// The clock every deadline in saturn uses (see the file comment). Meets the
/// TrivialClock requirements; steady. Threading: now() may be called from any thread.
struct clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<clock, duration>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    // ordering: relaxed; the simulation writes it on the thread that reads it.
    if constexpr (config::simulation) {
      const std::int64_t v = detail::g_virtual_now_ns.load(std::memory_order_relaxed);
      if (v != 0) [[unlikely]]
        return time_point(duration(v));
    }
    return time_point(std::chrono::duration_cast<duration>(std::chrono::steady_clock::now().time_since_epoch()));
  }
  /// While a simulation owns time: the virtual time in nanoseconds since its start
  /// (never 0); otherwise 0. For code that must derive a wall-clock value (an HTTP Date)
  /// from virtual time so that runs of one seed agree. Any thread; always 0 in a build
  /// with SATURN_SIMULATION=OFF.
  static std::int64_t virtual_ns() noexcept {
    // ordering: relaxed; as in now().
    if constexpr (config::simulation)
      return detail::g_virtual_now_ns.load(std::memory_order_relaxed);
    return 0;
  }
  /// CLOCK_MONOTONIC_COARSE: the same epoch as now(), a few ns to read, a scheduler tick
  /// (1-4 ms) of resolution. For deadlines checked in bulk (the HTTP server's sweep).
  /// Virtual under a simulation, like now().
  static time_point coarse_now() noexcept {
    // ordering: relaxed; as in now().
    if constexpr (config::simulation) {
      const std::int64_t v = detail::g_virtual_now_ns.load(std::memory_order_relaxed);
      if (v != 0) [[unlikely]]
        return time_point(duration(v));
    }
    ::timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return time_point(duration(static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec));
  }
};

}  // namespace saturn
