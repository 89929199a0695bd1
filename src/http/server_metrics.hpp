// The HTTP server's metrics (docs/observability.md): requests by route and status class,
// a sampled handling-time histogram, connections and bytes. Made once per server (the
// counters themselves live in metrics::registry::global(), shared by every server with
// the same route patterns), so a request pays only the increments. What a request costs,
// counted with callgrind (scripts/ab --callgrind, metrics off against on):
//   * requests: an HTTP/1.1 connection notes each answer in its request_tally (two
//     compares and an add on its own frame) and adds the run to the thread's cell, which
//     the tally keeps (metrics::detail::cell_binding: a TLS load and a compare to check
//     it is still this thread's), before the batch's answers are sent: a pipelined batch
//     of 16 answers of one route pays one add. HTTP/2 streams count one by one (count()).
//   * duration: a per-thread tick; one request in sample_every reads the clock twice
//     (steady_clock, the vDSO: ~20-30 ns each) and observes, so the average cost is a
//     few ns. HTTP/1.1 ticks once per batch of requests read together and times the
//     batch's first request. The connection's own timestamps are the coarse clock (ms steps), too
//     coarse for a latency histogram, hence the sampling;
//   * bytes: one add per recv and per send (to the cells the tally keeps),
//     connections: one add each way per connection.
// With SATURN_METRICS=OFF (saturn/config.hpp) every one of these writes compiles out; the
// counters stay registered and read 0.
#pragma once

#include <saturn/config.hpp>
#include <saturn/http/router.hpp>
#include <saturn/metrics/detail/cell_binding.hpp>
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

  /// The requests counter of `route` (unmatched_route: none) and `status`'s class.
  metrics::counter& requests_of(std::size_t route, int status) const noexcept {
    int cls = status / 100;
    if (cls < 1 || cls > 5)
      cls = 5;
    return *requests[route * 5 + static_cast<std::size_t>(cls - 1)];
  }

  /// Counts a request answered with `status` by route `route` (unmatched_route: none).
  [[gnu::always_inline]] void count(std::size_t route, int status) noexcept {
    if constexpr (config::metrics)
      requests_of(route, status).inc();
  }

  /// The start of a timed request (non-zero) or 0 for one not sampled. Loop thread.
  [[gnu::always_inline]] static std::int64_t sample_start() noexcept {
    if constexpr (!config::metrics)
      return 0;
    if (++t_sample_tick % sample_every != 0) [[likely]]
      return 0;
    return std::chrono::steady_clock::now().time_since_epoch().count() | 1;
  }
  /// sample_start() for HTTP/1.1, whose requests come in batches (read together,
  /// pipelined): only a batch's first request ticks (`first` is true for it; set false
  /// here), so a batch of 16 pays one tick; one batch in sample_every has its first
  /// request timed. Loop thread.
  [[gnu::always_inline]] static std::int64_t sample_start(bool& first) noexcept {
    if (!config::metrics || !first) [[likely]]
      return 0;
    first = false;
    return sample_start();
  }
  /// Observes the time since `start` when it was sampled.
  [[gnu::always_inline]] void sample_end(std::int64_t start) noexcept {
    if (!config::metrics || start == 0) [[likely]]
      return;
    observe_since(start);
  }

 private:
  void observe_since(std::int64_t start) noexcept;
  static inline thread_local std::uint32_t t_sample_tick = 0;
};

/// One HTTP/1.1 connection's counting (see the file comment): the run of answers with one
/// route and status not yet added to the requests counter, and the calling thread's cells
/// of the requests and bytes counters. Lives in the connection task's frame; flush()
/// before the answers it noted are sent (a client that saw an answer finds it counted);
/// the destructor flushes what is left.
class request_tally {
 public:
  explicit request_tally(server_metrics& m) noexcept : m_m(m) {}
  ~request_tally() { flush(); }
  request_tally(const request_tally&) = delete;
  request_tally& operator=(const request_tally&) = delete;

  /// An answer with `status` by route `route`.
  [[gnu::always_inline]] void note(std::size_t route, int status) noexcept {
    if constexpr (config::metrics) {
      if (route == m_route && status == m_status) [[likely]]
        ++m_pending;
      else
        start_run(route, status);
    }
  }
  /// Adds the pending run to the requests counter.
  [[gnu::always_inline]] void flush() noexcept {
    if (config::metrics && m_pending != 0) {
      if (!m_cells.bound() || m_req == nullptr) [[unlikely]]
        rebind();
      metrics::detail::cell_add(*m_req, m_pending);
      m_pending = 0;
    }
  }
  /// Bytes received on the connection.
  [[gnu::always_inline]] void received(std::uint64_t n) noexcept {
    if constexpr (config::metrics) {
      if (!m_cells.bound()) [[unlikely]]
        rebind();
      metrics::detail::cell_add(*m_rx, n);
    }
  }
  /// Bytes sent on the connection.
  [[gnu::always_inline]] void sent(std::uint64_t n) noexcept {
    if constexpr (config::metrics) {
      if (!m_cells.bound()) [[unlikely]]
        rebind();
      metrics::detail::cell_add(*m_tx, n);
    }
  }

 private:
  [[gnu::noinline]] void start_run(std::size_t route, int status) noexcept {
    flush();
    m_route = route;
    m_status = status;
    m_req = nullptr;
    m_pending = 1;
  }
  /// Looks the cells up on the calling thread (the first time, or after the task moved).
  [[gnu::noinline]] void rebind() noexcept {
    m_rx = m_cells.bind(*m_m.bytes_received);
    m_tx = m_cells.bind(*m_m.bytes_sent);
    m_req = m_pending != 0 ? m_cells.bind(m_m.requests_of(m_route, m_status)) : nullptr;
  }

  server_metrics& m_m;
  metrics::detail::cell_binding m_cells;
  metrics::detail::cell* m_req = nullptr;  // the current run's requests cell (null: not looked up)
  metrics::detail::cell* m_rx = nullptr;
  metrics::detail::cell* m_tx = nullptr;
  std::size_t m_route = ~std::size_t{0};  // the current run (none yet)
  int m_status = 0;
  std::uint64_t m_pending = 0;  // answers of the run not yet added
};

}  // namespace saturn::http::detail
