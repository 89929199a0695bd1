// saturn-http: the http suite's server (docs/workloads.md, "http"). 127.0.0.1 only.
//   GET /plaintext  → 200 text/plain "Hello, World!"
//   GET /json       → 200 application/json {"message":"Hello, World!"}
//   GET /delay/{ms} → 200 text/plain "<ms>" after at least ms milliseconds (503 if the
//                     server stops meanwhile: stop() cancels the sleep)
//   other methods on those paths → 405 with Allow; a method nobody knows → 501;
//   OPTIONS * → 200 with Allow; anything else → 404
//   GET /metrics    → the Prometheus text format (metrics::render), with --metrics only
// Runs on a thread_pool in io mode with --threads workers, one SO_REUSEPORT listener per
// worker by default (--accept). Raises its soft RLIMIT_NOFILE to the hard limit at start.
// SIGTERM/SIGINT stop it through os::graceful_stop (as saturn-echo): the listeners close at
// once (new connections are refused) and so do connections waiting for a request; the
// requests in flight get --stop-grace-ms to finish and be answered (http::server::drain),
// then their handlers are cancelled; then the pool joins and it exits 0.
#include <saturn/http/debug_route.hpp>
#include <saturn/http/metrics_route.hpp>
#include <saturn/http/serve.hpp>
#include <saturn/metrics/debug_dump.hpp>
#include <saturn/sched/stall.hpp>
#include <saturn/http/server.hpp>
#include <saturn/net/address.hpp>
#include <saturn/os/graceful.hpp>
#include <saturn/os/signal.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/time.hpp>

#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "listeners.hpp"
#include "nofile.hpp"
#include "start_pool.hpp"

#include <algorithm>
#include <charconv>
#include <atomic>
#include <csignal>
#include <optional>
#include <cstdio>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using saturn::http::request;
using saturn::http::response;
using saturn::http::route_params;

constexpr std::string_view k_hello = "Hello, World!";
constexpr std::string_view k_json = R"({"message":"Hello, World!"})";
constexpr long k_max_delay_ms = 60'000;
constexpr long k_max_timeout_ms = 86'400'000;  // a day: longer is surely a typo

saturn::task<response> plaintext(const request&, const route_params&) {
  co_return response::with_static_body(200, "text/plain", k_hello);
}

saturn::task<response> json(const request&, const route_params&) {
  co_return response::with_static_body(200, "application/json", k_json);
}

// One loop-kept timer per waiting request: the sleep awaiter lives in this frame, the
// loop's timer heap holds it, nothing else is allocated for the wait. Never answers early
// (sleep_for never ends before its deadline). At SIGTERM, server::stop() cancels the
// sleep through the handler's stop token and the answer is 503.
saturn::task<response> delay(const request&, const route_params& p) {
  const saturn::http::decoded ms_value = p.get("ms");
  std::string_view ms_text = ms_value.view();
  long ms = -1;
  auto [end, ec] = std::from_chars(ms_text.data(), ms_text.data() + ms_text.size(), ms);
  // Digits only: from_chars would take "-0" for 0.
  if (ms_text.empty() || ms_text.front() < '0' || ms_text.front() > '9' || ec != std::errc() ||
      end != ms_text.data() + ms_text.size() || ms < 0 || ms > k_max_delay_ms)
    co_return response(400, "text/plain", "delay: ms must be an integer in [0, 60000]\n");
  auto sleep = saturn::sleep_for(std::chrono::milliseconds(ms));
  auto slept = co_await sleep;
  if (!slept) {
    response r(503, "text/plain", "delay: cancelled, the server is stopping\n");
    r.close = true;
    co_return r;
  }
  co_return response(200, "text/plain", std::to_string(ms));  // the decimal ms: "00005" answers "5"
}

/// apps::bind_listeners on 127.0.0.1:port, or nothing after saying why on stderr.
std::optional<std::vector<saturn::net::tcp_listener>> listen_on(std::uint16_t port, unsigned n) {
  // One accept SQE per connection, not a multishot accept: a multishot accept takes a
  // whole burst of connects from the backlog in one go, past --max-connections, and those
  // would wait for a slot holding descriptors and no timeout. Connections here are long
  // lived (keep-alive), so the per-accept SQE is not measurable in the benchmarks.
  auto bound = apps::bind_listeners(saturn::net::address::loopback_v4(port), n, false);
  if (!bound) {
    std::fprintf(stderr, "saturn-http: cannot listen on 127.0.0.1:%u: %s\n", port, bound.err().message().c_str());
    return std::nullopt;
  }
  return std::move(*bound);
}

/// Serves one listener; the exit status (1 after saying why on stderr).
saturn::task<int> serve_one(saturn::http::server& srv, saturn::net::tcp_listener& l) {
  auto served = co_await srv.serve(l);
  if (!served) {
    std::fprintf(stderr, "saturn-http: %s\n", served.err().message().c_str());
    co_return 1;
  }
  co_return 0;
}

// The pool's way (--accept): one listener, or one SO_REUSEPORT listener per worker with its
// serve() placed on that worker (graceful_stop::spawn_on: its accepts go to that worker's
// ring and the connections it accepts start there), all on one server (one connection
// limit, one stop). Each serve() is the stop's work in flight: it ends once its
// connections have. A serve() that fails stops the whole server, as SIGTERM would.
// atomic door: an app is a user of the public API and uses std::atomic as any user would.
saturn::task<void> serve_listener(saturn::http::server& srv, saturn::net::tcp_listener& l, std::atomic<int>& code) {
  auto served = serve_one(srv, l);
  if (const int c = co_await std::move(served); c != 0) {
    code.store(c);
    ::kill(::getpid(), SIGTERM);  // process-directed: the stop's signalfd reads it
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn-http: HTTP/1.1 server of the http benchmark suite (127.0.0.1 only)"};
  unsigned port = 8080;
  unsigned threads = std::thread::hardware_concurrency();
  saturn::http::server_options opts;
  long header_ms = opts.header_timeout.count(), idle_ms = opts.idle_timeout.count();
  long send_ms = opts.send_timeout.count();
  app.add_option("--port", port, "TCP port on 127.0.0.1")->transform(apps::decimal())->check(CLI::Range(1u, 65535u));
  app.add_option("--threads", threads, "worker threads (thread_pool, io mode)")->transform(apps::decimal())
      ->check(CLI::Range(1u, 255u));  // the pool's limit
  app.add_option("--max-connections", opts.max_connections, "accepting pauses at this many open connections")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24));
  app.add_option("--header-timeout-ms", header_ms, "close a connection whose request headers take longer")
      ->check(CLI::Range(1L, k_max_timeout_ms));
  app.add_option("--idle-timeout-ms", idle_ms, "close a kept-alive connection idle this long")
      ->check(CLI::Range(1L, k_max_timeout_ms));
  app.add_option("--send-timeout-ms", send_ms, "close a connection whose response makes no progress this long")
      ->check(CLI::Range(1L, k_max_timeout_ms));
  app.add_option("--max-body", opts.limits.max_body, "largest request body (413 above)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 40));
  unsigned spin_us = 50;
  app.add_option("--spin-us", spin_us, "how long an idle worker searches for work before it parks")
      ->check(CLI::Range(0u, 1'000'000u));
  app.add_flag("--multishot-receive", opts.multishot_receive,
               "read through a multishot receive (provided buffers) instead of one recv per read (A/B)");
  std::string accept_mode = "reuseport";
  app.add_option("--accept", accept_mode,
                 "reuseport: one SO_REUSEPORT listener per worker (each worker accepts its own connections); "
                 "shared: one listener for the pool")
      ->check(CLI::IsMember({"shared", "reuseport"}));
  bool per_thread = false;
  app.add_flag("--per-thread-runtimes", per_thread,
               "A/B: one single-threaded runtime and SO_REUSEPORT listener per thread instead of the thread_pool");
  bool steal_io = false;
  app.add_flag("--steal-io-wakeups", steal_io, "A/B: let other workers steal tasks their ring woke (pin_io_wakeups off)");
  bool with_metrics = false;
  app.add_flag("--metrics", with_metrics, "serve GET /metrics (Prometheus text format; off by default)");
  unsigned stop_grace_ms = static_cast<unsigned>(opts.stop_grace.count());
  app.add_option("--stop-grace-ms", stop_grace_ms,
                 "at SIGTERM/SIGINT, how long requests in flight may go on before they are cancelled")
      ->transform(apps::decimal())
      ->check(CLI::Range(0u, 3600000u))
      ->capture_default_str();
  bool debug_tasks = false;
  app.add_flag("--debug-tasks", debug_tasks, "serve GET /debug/tasks (the live tasks: spawn site, age, worker, state; off by default)");
  bool dump_on_usr1 = false;
  app.add_flag("--dump-on-sigusr1", dump_on_usr1, "write the task dump to stderr on each SIGUSR1 (off by default)");
  unsigned stall_ms = 0;
  app.add_option("--stall-ms", stall_ms,
                 "report on stderr a worker that runs one task step longer than this many milliseconds (0: off)");
  bool ring_send = false;
  app.add_flag("--ring-send", ring_send, "send through the ring only (no first non-blocking send(2); A/B)");
  app.footer("SIGTERM/SIGINT stop accepting, give requests in flight --stop-grace-ms, close every connection and exit 0. Exit status 1: the port cannot be bound or the workers cannot start; 2: bad arguments.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the help, or the error and a hint
    return code == 0 ? 0 : 2;       // CLI11's own codes (10x) are not the usage convention
  }
  // Connections need descriptors: take what the hard limit allows, and say so when even
  // that is below the connection limit (accepting then also pauses at the descriptor
  // limit, with one log line, rather than at --max-connections).
  const std::int64_t nofile = apps::raise_nofile();
  if (static_cast<std::int64_t>(opts.max_connections) + 64 > nofile)
    std::fprintf(stderr,
                 "saturn-http: --max-connections %zu is more than RLIMIT_NOFILE (%lld descriptors) allows; raise "
                 "the hard limit (ulimit -Hn) to hold that many\n",
                 opts.max_connections, static_cast<long long>(nofile));
  opts.direct_send = !ring_send;
  opts.header_timeout = std::chrono::milliseconds(header_ms);
  opts.idle_timeout = std::chrono::milliseconds(idle_ms);
  opts.send_timeout = std::chrono::milliseconds(send_ms);
  opts.stop_grace = std::chrono::milliseconds(stop_grace_ms);
  opts.server_name = "saturn";

  std::signal(SIGPIPE, SIG_IGN);  // a peer that closed must not kill the server on send
  saturn::http::router routes;
  routes.get("/plaintext", plaintext);
  routes.get("/json", json);
  routes.get("/delay/{ms}", delay);
  if (with_metrics)
    saturn::http::add_metrics_route(routes);
  if (debug_tasks)
    saturn::http::add_debug_routes(routes);
  // Before the pool starts: its workers inherit the blocked SIGUSR1 (see signal_dumper).
  std::optional<saturn::metrics::signal_dumper> dumper;
  if (dump_on_usr1)
    dumper.emplace(SIGUSR1);
  std::optional<saturn::stall_detector> stalls;
  if (stall_ms != 0) {
    saturn::stall_options so;
    so.threshold = std::chrono::milliseconds(stall_ms);
    stalls.emplace(std::move(so));
  }
  if (per_thread) {
    // A/B against the pool: one single-threaded runtime per thread, each with its own
    // SO_REUSEPORT listener and server (connections never move between threads).
    opts.max_connections = std::max<std::size_t>(1, opts.max_connections / threads);
    auto ls = listen_on(static_cast<std::uint16_t>(port), threads);
    if (!ls)
      return 1;
    std::vector<std::thread> workers;
    std::vector<int> codes(threads, 0);
    for (unsigned i = 0; i < threads; ++i)
      workers.emplace_back([&, i] {
        saturn::runtime rt;
        saturn::http::server srv(routes, opts);
        codes[i] = rt.block_on(serve_one(srv, (*ls)[i]));
      });
    for (auto& t : workers)
      t.join();
    return *std::max_element(codes.begin(), codes.end());
  }
  // Block the stop signals before any worker starts (every worker inherits the mask), so
  // the kernel keeps them for the signalfd that graceful_stop reads (os/signal.hpp).
  if (auto blocked = saturn::os::block_signals({SIGTERM, SIGINT}); !blocked) {
    std::fprintf(stderr, "saturn-http: %s\n", blocked.err().message().c_str());
    return 1;
  }
  saturn::http::server srv(routes, opts);
  std::optional<saturn::thread_pool> pool_box;
  if (!apps::start_pool(pool_box,
                        {.threads = threads,
                         .mode = saturn::pool_mode::io,
                         .loop = {},
                         .spin_before_park_us = spin_us,
                         .max_blocking_threads = 64,
                         .pin_io_wakeups = !steal_io},
                        "saturn-http"))
    return 1;
  saturn::thread_pool& pool = *pool_box;
  auto ls = listen_on(static_cast<std::uint16_t>(port), accept_mode == "reuseport" ? pool.threads() : 1);
  if (!ls)
    return 1;
  std::atomic<int> code{0};  // atomic door: user code (see serve_listener)
  {
    saturn::os::graceful_stop gs(pool);
    gs.spawn_acceptor(saturn::http::drain_at_stop(gs, srv));  // at the stop: srv.drain()
    for (unsigned i = 0; i < ls->size(); ++i)  // listener i's serve() on worker i
      gs.spawn_on(i, serve_listener(srv, (*ls)[i], code));
    // The server cancels what still runs when --stop-grace-ms is over and then closes the
    // connections; the stop's own deadline, a second later, is only the backstop.
    auto stopped = pool.block_on(
        gs.stop_on_signals({SIGTERM, SIGINT}, std::chrono::milliseconds(stop_grace_ms) + std::chrono::seconds(1)));
    if (!stopped) {
      std::fprintf(stderr, "saturn-http: %s\n", stopped.err().message().c_str());
      return 1;
    }
  }
  return code.load();
}
