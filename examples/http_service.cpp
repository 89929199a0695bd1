// http_service: a small HTTP/1.1 service with a per-route deadline, a JSON route and a
// middleware on every route, served by http::serve until SIGINT or SIGTERM.
//
// Shows: http::router with both handler forms (request alone; request + route params),
// http::with_deadline (a slow handler is cancelled and the client gets 504), router::wrap
// (a middleware adding a timing header to every answer, the 504s included), and
// http::serve, which listens on every worker and stops gracefully on a signal: it stops
// accepting, lets the handlers in flight answer, and returns.
//
// Routes:
//   GET /fast            200 "fast"
//   GET /slow?ms=N       sleeps N ms (default 1000) under a 200 ms deadline: 504 past it
//   GET /items/{id}      200 application/json {"id":..,"name":..,"square":..}; 400 for a bad id
//
// Run:  example_http_service --port 8080
//       curl -i 127.0.0.1:8080/slow?ms=50    curl -i 127.0.0.1:8080/slow    (504)
// It prints "listening on 127.0.0.1:PORT" once it accepts (--port 0: a free port).
#include <saturn/http.hpp>
#include <saturn/sched.hpp>
#include <saturn/task.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using saturn::task;
namespace http = saturn::http;
using namespace std::chrono_literals;

task<http::response> fast(const http::request&) { co_return http::response::text("fast\n"); }

// Stands for upstream work that may take too long. The deadline cancels the sleep (it
// then ends with operation_canceled) and answers 504 itself.
task<http::response> slow(const http::request& req) {
  const int ms = req.query().get_or<int>("ms", 1000);
  auto slept = co_await saturn::sleep_for(std::chrono::milliseconds(ms));
  if (!slept)
    co_return http::response::text("cancelled\n", 503);
  co_return http::response::text("slept " + std::to_string(ms) + " ms\n");
}

task<http::response> item(const http::request&, const http::route_params& p) {
  auto id = p.get<long>("id");
  if (!id)
    co_return http::response::json(400, R"({"error":"id must be an integer"})");
  const std::string n = std::to_string(*id);
  co_return http::response::json(200, R"({"id":)" + n + R"(,"name":"item )" + n + R"(","square":)" +
                                          std::to_string(*id * *id) + "}");
}

// Around every handler: how long it took, in a response header.
task<http::response> timed(const http::request& req, const http::route_params& p, const http::handler& next) {
  const auto t0 = std::chrono::steady_clock::now();
  http::response r = co_await next(req, p);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  r.add_header("X-Handler-Micros", std::to_string(us.count()));
  co_return r;
}

int main(int argc, char** argv) {
  long port = 0;
  if (argc == 3 && std::string_view(argv[1]) == "--port") {
    port = std::atol(argv[2]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--port N]\n", argv[0]);
    return 2;
  }
  http::router routes;
  routes.get("/fast", fast);
  routes.get("/slow", http::with_deadline(200ms, slow));
  routes.get("/items/{id}", item);
  routes.wrap(timed);

  saturn::thread_pool pool;
  http::serve_options opts;  // stop_on_signals is on by default
  opts.on_listening = [](const saturn::net::address& at) {
    std::printf("listening on %s\n", at.to_string().c_str());
    std::fflush(stdout);
  };
  auto served = http::serve(pool, routes, saturn::net::address::loopback_v4(static_cast<std::uint16_t>(port)), opts);
  if (!served) {
    std::fprintf(stderr, "http_service: %s\n", served.err().message().c_str());
    return 1;
  }
  std::fprintf(stderr, "http_service: stopped\n");
  return 0;
}
