// The HTTP server's metrics against the requests a test makes: by route pattern and
// status class (a parameterized route counted under its pattern, unrouted paths and
// handler failures), bytes, connections, the sampled duration histogram, and /metrics
// itself (status, Content-Type, a well-formed body).
#include <saturn/http.hpp>
#include <saturn/metrics.hpp>
#include <saturn/sched/thread_pool.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>

#include "metrics/exposition.hpp"
#include "metrics/http_get.hpp"

namespace {

double now_value(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels = {}) {
  return saturn_test::parse_exposition(saturn::metrics::render()).sum(name, labels);
}

}  // namespace

TEST(MetricsHttp, RequestsAreCountedByRoutePatternAndStatusClass) {
  saturn::thread_pool pool({.threads = 2});
  saturn::http::router routes;
  routes.get("/item/{id}", [](const saturn::http::request&) -> saturn::task<saturn::http::response> {
    co_return saturn::http::response::text("item\n");
  });
  routes.get("/fail", [](const saturn::http::request&) -> saturn::task<saturn::http::response> {
    throw std::runtime_error("handler failure");
    co_return saturn::http::response::text("never\n");
  });
  saturn::http::add_metrics_route(routes);
  std::stop_source stop;
  std::atomic<std::uint16_t> port{0};
  saturn::http::serve_options so;
  so.listeners = 1;
  so.stop_on_signals = false;
  so.stop = stop.get_token();
  so.on_listening = [&](const saturn::net::address& a) { port = a.port(); };
  std::thread server([&] { (void)saturn::http::serve(pool, routes, saturn::net::address::loopback_v4(0), so); });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (port.load() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_NE(port.load(), 0);

  const double items0 = now_value("saturn_http_requests_total", {{"route", "/item/{id}"}, {"class", "2xx"}});
  const double miss0 = now_value("saturn_http_requests_total", {{"route", "unmatched"}, {"class", "4xx"}});
  const double fail0 = now_value("saturn_http_requests_total", {{"route", "/fail"}, {"class", "5xx"}});
  const double accepted0 = now_value("saturn_http_connections_accepted_total");
  const double rx0 = now_value("saturn_http_bytes_received_total");
  const double tx0 = now_value("saturn_http_bytes_sent_total");
  const double timed0 = now_value("saturn_http_request_duration_seconds_count");

  constexpr int items = 64, misses = 5, fails = 3;
  std::size_t sent_bytes = 0, got_bytes = 0;
  for (int i = 0; i < items; ++i) {
    const std::string target = "/item/" + std::to_string(i);
    const std::string answer = saturn_test::http_get(port, target);
    ASSERT_NE(answer.find("200 OK"), std::string::npos);
    got_bytes += answer.size();
    sent_bytes += ("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").size();
  }
  for (int i = 0; i < misses; ++i)
    ASSERT_NE(saturn_test::http_get(port, "/nope").find("404"), std::string::npos);
  for (int i = 0; i < fails; ++i)
    ASSERT_NE(saturn_test::http_get(port, "/fail").find("500"), std::string::npos);

  // Each connection is counted closed just after its last send: wait for the open count
  // to come down to the one /metrics request below (bounded).
  const std::string answer = saturn_test::http_get(port, "/metrics");
  ASSERT_NE(answer.find("200 OK"), std::string::npos);
  EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos) << answer;
  const std::size_t body_at = answer.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  const auto e = saturn_test::parse_exposition(answer.substr(body_at + 4));
  EXPECT_GE(saturn_test::check_histograms(e), 1);

  EXPECT_EQ(e.sum("saturn_http_requests_total", {{"route", "/item/{id}"}, {"class", "2xx"}}) - items0, items);
  EXPECT_EQ(e.sum("saturn_http_requests_total", {{"route", "unmatched"}, {"class", "4xx"}}) - miss0, misses);
  EXPECT_EQ(e.sum("saturn_http_requests_total", {{"route", "/fail"}, {"class", "5xx"}}) - fail0, fails);
  EXPECT_EQ(e.sum("saturn_http_connections_accepted_total") - accepted0, items + misses + fails + 1);
  // Received: at least our item requests' bytes (plus the misses', failures' and this one).
  EXPECT_GE(e.sum("saturn_http_bytes_received_total") - rx0, double(sent_bytes));
  EXPECT_GE(e.sum("saturn_http_bytes_sent_total") - tx0, double(got_bytes));
  // Sampled: one in 16 per worker; 73 requests over 2 workers time at least 2 of them.
  const double timed = e.sum("saturn_http_request_duration_seconds_count") - timed0;
  EXPECT_GE(timed, 2);
  EXPECT_LE(timed, double(items + misses + fails + 1) / 16 + 2);

  stop.request_stop();
  server.join();
  EXPECT_EQ(now_value("saturn_http_connections_open"), 0) << "every connection ended";
}
