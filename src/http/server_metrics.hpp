// The HTTP server's metrics (docs/observability.md): requests by route and status class,
// a sampled handling-time histogram, connections and bytes. Made once per server (the
// counters themselves live in metrics::registry::global(), shared by every server with
// the same route patterns), so a request pays only the increments:
//   * requests: an index into `requests` and a counter::inc — a TLS load, two loads and
//     a plain add on this thread's own cell (no lock, no read-modify-write);
//   * duration: a per-thread tick; one request in sample_every reads the clock twice
//     (steady_clock, the vDSO: ~20-30 ns each) and observes, so the average cost is a
//     few ns. The connection's own timestamps are the coarse clock (ms steps), too
//     coarse for a latency histogram, hence the sampling;
//   * bytes: one add per recv and per send, connections: one add each way per connection.
// With SATURN_METRICS=OFF (saturn/config.hpp) every one of these writes compiles out; the
// counters stay registered and read 0.
#pragma once

#include <saturn/config.hpp>
#include <saturn/http/router.hpp>
#include <saturn/metrics/registry.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

namespace saturn::http::detail {

struct server_metrics {
  /// One request in this many (per thread) is timed.
  static constexpr std::uint32_t sample_every = 16;

  std::vector<metrics::counter*> requests;  // [route * 5 + class - 1]; route == route_count: unmatched
  std::size_t unmatched_route = 0;
  metrics::histogram* duration = nullptr;
  metrics::counter* accepted = nullptr;
  metrics::counter* closed = nullptr;
  metrics::counter* bytes_received = nullptr;
  metrics::counter* bytes_sent = nullptr;

  explicit server_metrics(const router& r);

  /// Adds `n` to one of the server's counters (bytes, connections). Loop thread.
  static void add(metrics::counter& c, std::uint64_t n = 1) noexcept {
    if constexpr (config::metrics)
      c.inc(n);
  }

  /// Counts a request answered with `status` by route `route` (unmatched_route: none).
  void count(std::size_t route, int status) noexcept {
    if constexpr (!config::metrics)
      return;
    int cls = status / 100;
    if (cls < 1 || cls > 5)
      cls = 5;
    requests[route * 5 + static_cast<std::size_t>(cls - 1)]->inc();
  }

  /// The start of a timed request (non-zero) or 0 for one not sampled. Loop thread.
  static std::int64_t sample_start() noexcept {
    if constexpr (!config::metrics)
      return 0;
    static thread_local std::uint32_t tick = 0;
    if (++tick % sample_every != 0) [[likely]]
      return 0;
    return std::chrono::steady_clock::now().time_since_epoch().count() | 1;
  }
  /// Observes the time since `start` when it was sampled.
  void sample_end(std::int64_t start) noexcept {
    if (!config::metrics || start == 0) [[likely]]
      return;
    const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    using period = std::chrono::steady_clock::period;
    duration->observe(double(now - start) * double(period::num) / double(period::den));
  }
};

}  // namespace saturn::http::detail
