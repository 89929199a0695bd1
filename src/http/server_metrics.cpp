// server_metrics: registers the server's counters in the global registry (shared by every
// server whose routes have the same patterns).
#include "http/server_metrics.hpp"

#include <string>

namespace saturn::http::detail {

server_metrics::server_metrics(const router& r) {
  metrics::registry& reg = metrics::registry::global();
  static const char* const classes[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
  unmatched_route = r.route_count();
  requests.reserve((unmatched_route + 1) * 5);
  for (std::size_t i = 0; i <= unmatched_route; ++i) {
    const std::string route = i < unmatched_route ? std::string(r.route_pattern(i)) : std::string("unmatched");
    for (const char* c : classes)
      requests.push_back(&reg.counter("saturn_http_requests_total",
                                      "HTTP requests answered, by route pattern and status class.",
                                      {{"route", route}, {"class", c}}));
  }
  duration = &reg.histogram(
      "saturn_http_request_duration_seconds",
      "Time from a parsed request to its serialized response (handler included, send not), "
      "sampled: one request in 16 per worker (HTTP/1.1: the first request of one read batch in 16).",
      {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  accepted = &reg.counter("saturn_http_connections_accepted_total", "Connections the HTTP server accepted.");
  closed = &reg.counter("saturn_http_connections_closed_total", "HTTP connections that ended.");
  bytes_received = &reg.counter("saturn_http_bytes_received_total", "Bytes read from HTTP connections.");
  bytes_sent = &reg.counter("saturn_http_bytes_sent_total", "Bytes of HTTP responses sent.");
  // Open connections: accepted minus closed at render time, so a connection costs two
  // per-thread adds rather than a shared gauge's read-modify-write each way.
  static const metrics::registry::collector_handle open = reg.add_collector(
      [a = accepted, c = closed](metrics::sample_sink& sink) {
        sink.family("saturn_http_connections_open", "HTTP connections open now.", metrics::metric_type::gauge);
        const std::uint64_t in = a->value(), out = c->value();
        sink.sample("saturn_http_connections_open", {}, in > out ? in - out : std::uint64_t{0});
      });
}

void server_metrics::observe_since(std::int64_t start) noexcept {
  const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  using period = std::chrono::steady_clock::period;
  duration->observe(double(now - start) * double(period::num) / double(period::den));
}

}  // namespace saturn::http::detail
