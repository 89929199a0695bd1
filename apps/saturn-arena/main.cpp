// saturn-arena: saturn's HttpArena entry (docs/arena.md), HTTP/1.1 on --port (8080):
//   GET|POST /baseline11?a=&b=  the sum of a, b and (POST) the integer body; text/plain
//   GET /pipeline               "ok"; text/plain
//   GET /json/{count}?m=        the first count dataset items with total = price*quantity*m,
//                               serialized per request; gzip / br when Accept-Encoding asks
//   POST /upload                the number of body bytes read; text/plain
//   GET /static/{*path}         the files of --data/static (precompressed .br / .gz siblings)
//   GET /ws                     WebSocket echo (RFC 6455)
//   GET /metrics                the Prometheus text format (metrics::render), with --metrics only
//   GET /async-db, /crud/items  HttpArena's async-db and crud profiles over PostgreSQL
//                               (db.hpp): DATABASE_URL or --database-url, a pool of
//                               DATABASE_MAX_CONN connections; 503 without a database
//   GET /baseline2?a=&b=        the sum of a and b (the HTTP/2 profiles' endpoint)
//   gRPC benchmark.BenchmarkService/GetSum (unary-grpc; h2c on --port and --h2c-port, h2
//                               on --h2-port) and grpc.health.v1.Health (Check, Watch)
// The same routes over TLS on --tls-port (8081, json-tls) with --tls-cert / --tls-key
// (HttpArena's /certs/server.crt and server.key), ALPN http/1.1 only; over HTTP/2 with
// TLS on --h2-port (8443: baseline-h2, static-h2; ALPN h2, then http/1.1), and over
// cleartext HTTP/2 only on --h2c-port (8082: baseline-h2c, json-h2c; HTTP/1.1 there gets
// 505, as HttpArena's validation requires). --port also serves h2c to a client that
// starts with the HTTP/2 preface (prior knowledge).
// Runs on a thread_pool (--threads), one SO_REUSEPORT listener per worker (http::serve);
// SIGTERM / SIGINT stop it through os::graceful_stop (http::serve's graceful mode): the
// listeners close (new connections are refused), idle connections close, requests in
// flight get --stop-grace-ms to finish; then it exits 0.
#include <saturn/grpc.hpp>
#include <saturn/http.hpp>
#include <saturn/os/signal.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/tls.hpp>

#include <saturn/http/debug_route.hpp>
#include <saturn/metrics/debug_dump.hpp>
#include <saturn/sched/stall.hpp>

#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "dataset.hpp"
#include "db.hpp"
#include "nofile.hpp"
#include "saturn-arena/benchmark.pb.h"
#include "routes.hpp"
#include "start_pool.hpp"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>
#include <thread>

namespace {

/// The CPUs this process may run on (a container's cpuset), not the host's count.
unsigned affinity_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    if (int n = CPU_COUNT(&set); n > 0)
      return static_cast<unsigned>(n);
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn-arena: saturn's HttpArena entry (HTTP/1.1 and HTTP/2 profiles)"};
  arena::config cfg;
  unsigned port = 8080;
  unsigned tls_port = 8081;
  unsigned h2_port = 8443;
  unsigned h2c_port = 8082;
  std::string tls_cert = "/certs/server.crt", tls_key = "/certs/server.key";
  std::string bind = "127.0.0.1";
  unsigned threads = affinity_cpus();
  saturn::http::serve_options opts;
  opts.max_connections = 65536;
  app.add_option("--port", port, "TCP port of HTTP/1.1")->transform(apps::decimal())->check(CLI::Range(1u, 65535u))
      ->capture_default_str();
  app.add_option("--tls-port", tls_port, "TCP port of HTTP/1.1 over TLS (json-tls; 0: none)")
      ->transform(apps::decimal())->check(CLI::Range(0u, 65535u))->capture_default_str();
  app.add_option("--h2-port", h2_port, "TCP port of HTTP/2 over TLS (baseline-h2, static-h2; 0: none)")
      ->transform(apps::decimal())->check(CLI::Range(0u, 65535u))->capture_default_str();
  app.add_option("--h2c-port", h2c_port, "TCP port of cleartext HTTP/2 only (baseline-h2c, json-h2c; 0: none)")
      ->transform(apps::decimal())->check(CLI::Range(0u, 65535u))->capture_default_str();
  app.add_option("--tls-cert", tls_cert, "PEM certificate chain for --tls-port (missing default: no TLS listener)")
      ->capture_default_str();
  app.add_option("--tls-key", tls_key, "PEM private key for --tls-cert")->capture_default_str();
  app.add_option("--bind", bind, "address to listen on (HttpArena's container needs 0.0.0.0)")->capture_default_str();
  app.add_option("--data", cfg.data_dir, "folder with dataset.json and static/ (either may be missing)")
      ->capture_default_str();
  app.add_option("--threads", threads, "worker threads (default: the CPUs this process may use)")
      ->transform(apps::decimal())->check(CLI::Range(1u, 255u))->capture_default_str();
  unsigned spin_us = 50;
  app.add_option("--spin-us", spin_us, "how long an idle worker polls before parking, in microseconds")
      ->check(CLI::Range(0u, 100000u))->capture_default_str();
  app.add_option("--max-connections", opts.max_connections, "accepting pauses at this many open connections")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24))->capture_default_str();
  app.add_option("--max-body", cfg.max_body, "largest /upload body in bytes, streamed (413 above)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 32))->capture_default_str();
  app.add_option("--brotli-quality", cfg.compression.brotli_quality, "brotli quality of /json answers (0-11)")
      ->check(CLI::Range(0, 11))->capture_default_str();
  app.add_option("--gzip-level", cfg.compression.gzip_level, "gzip level of /json answers (1-9)")
      ->check(CLI::Range(1, 9))->capture_default_str();
  unsigned stop_grace_ms = static_cast<unsigned>(opts.stop_grace.count());
  app.add_option("--stop-grace-ms", stop_grace_ms,
                 "at SIGTERM/SIGINT, how long requests in flight may go on before they are cancelled")
      ->transform(apps::decimal())
      ->check(CLI::Range(0u, 3600000u))
      ->capture_default_str();
  std::string database_url;
  if (const char* env = std::getenv("DATABASE_URL"); env != nullptr)
    database_url = env;
  app.add_option("--database-url", database_url,
                 "PostgreSQL URL or key=value string for /async-db and /crud (default: $DATABASE_URL; none: they "
                 "answer 503)");
  std::size_t database_max_conn = 0;
  app.add_option("--database-max-conn", database_max_conn,
                 "connections in the database pool (0: $DATABASE_MAX_CONN, else 10)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000}))->capture_default_str();
  unsigned database_timeout_ms = 5000;
  app.add_option("--database-timeout-ms", database_timeout_ms,
                 "bound on a request's database work (waiting for a connection, connecting, the query); past it: 503")
      ->transform(apps::decimal())->check(CLI::Range(1u, 3600000u))->capture_default_str();
  bool with_metrics = false;
  app.add_flag("--metrics", with_metrics,
               "also serve GET /metrics (Prometheus text format); off by default, the HttpArena routes unchanged");
  bool debug_tasks = false;
  app.add_flag("--debug-tasks", debug_tasks, "serve GET /debug/tasks (the live tasks: spawn site, age, worker, state; off by default)");
  bool dump_on_usr1 = false;
  app.add_flag("--dump-on-sigusr1", dump_on_usr1, "write the task dump to stderr on each SIGUSR1 (off by default)");
  unsigned stall_ms = 0;
  app.add_option("--stall-ms", stall_ms,
                 "report on stderr a worker that runs one task step longer than this many milliseconds (0: off)");
  app.footer("SIGTERM/SIGINT stop accepting, give requests in flight --stop-grace-ms, close every connection and exit 0. Exit status 1: the port cannot be bound or the "
             "workers cannot start; 2: bad arguments.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  auto addr = saturn::net::address::parse(bind, static_cast<std::uint16_t>(port));
  if (!addr) {
    std::fprintf(stderr, "saturn-arena: --bind %s: not an IPv4 or IPv6 address\n", bind.c_str());
    return 2;
  }
  const std::int64_t nofile = apps::raise_nofile();
  if (static_cast<std::int64_t>(opts.max_connections) + 64 > nofile)
    opts.max_connections = static_cast<std::size_t>(std::max<std::int64_t>(nofile - 64, 1));

  arena::state st;
  if (!arena::load(cfg, st))  // says on stderr what it could not load; serves the rest
    std::fprintf(stderr, "saturn-arena: serving without the parts above\n");
  // Declared before the worker pool: its connections close after the workers stopped.
  arena::database db;
  db.timeout = std::chrono::milliseconds(database_timeout_ms);
  if (database_url.empty()) {
    std::fprintf(stderr, "saturn-arena: no DATABASE_URL or --database-url (/async-db and /crud answer 503)\n");
  } else if (std::string why; !db.open(database_url, database_max_conn, why)) {
    std::fprintf(stderr, "saturn-arena: --database-url: %s\n", why.c_str());
    return 2;
  }
  opts.server_name = "saturn";
  saturn::http::router routes;
  arena::add_routes(routes, st);
  arena::add_db_routes(routes, db);
  if (with_metrics)
    saturn::http::add_metrics_route(routes);
  // unary-grpc: GetSum, and the health service a gRPC deployment is probed with; gRPC
  // calls of any other path get UNIMPLEMENTED.
  saturn::grpc::service grpc_svc;
  grpc_svc.unary<benchmark::SumRequest, benchmark::SumReply>(
      "benchmark.BenchmarkService/GetSum",
      [](const benchmark::SumRequest& in, benchmark::SumReply& out,
         saturn::grpc::call_context&) -> saturn::task<saturn::grpc::status> {
        out.set_result(in.a() + in.b());
        co_return saturn::grpc::status::success();
      });
  saturn::grpc::health health;
  health.set("benchmark.BenchmarkService", saturn::grpc::health::serving);
  health.add_to(grpc_svc);
  grpc_svc.mount(routes);
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

  opts.stop_grace = std::chrono::milliseconds(stop_grace_ms);
  opts.graceful = true;
  // Block the stop signals before any worker starts (every worker inherits the mask), so
  // the kernel keeps them for the signalfd that graceful_stop reads (os/signal.hpp).
  if (auto blocked = saturn::os::block_signals({SIGTERM, SIGINT}); !blocked) {
    std::fprintf(stderr, "saturn-arena: %s\n", blocked.err().message().c_str());
    return 1;
  }
  std::optional<saturn::thread_pool> pool;
  if (!apps::start_pool(pool,
                        {.threads = threads,
                         .mode = saturn::pool_mode::io,
                         .loop = {},
                         .spin_before_park_us = spin_us,
                         .max_blocking_threads = 64,
                         .pin_io_wakeups = true},
                        "saturn-arena"))
    return 1;
  opts.on_listening = [&](const saturn::net::address& a) {
    std::fprintf(stderr, "saturn-arena: listening on %s:%u, %u threads\n", bind.c_str(), a.port(), pool->threads());
  };
  std::vector<saturn::http::endpoint> endpoints{{*addr}};
  // json-tls: HTTP/1.1 only (ALPN http/1.1: the port must never negotiate h2). HttpArena
  // mounts /certs only for TLS profiles: a missing default certificate means no TLS
  // listener; a certificate asked for by name that cannot be loaded is an error.
  const bool tls_named = app.count("--tls-cert") + app.count("--tls-key") > 0;
  const bool tls_wanted = tls_port != 0 || h2_port != 0;
  if (tls_wanted && (tls_named || ::access(tls_cert.c_str(), F_OK) == 0)) {
    // One context per port: ALPN differs (json-tls must never negotiate h2).
    for (auto [p, alpn] : {std::pair{tls_port, std::vector<std::string>{"http/1.1"}},
                           std::pair{h2_port, std::vector<std::string>{"h2", "http/1.1"}}}) {
      if (p == 0)
        continue;
      auto ctx = saturn::tls::context::server({.certificates = {{tls_cert, tls_key}}, .alpn = alpn});
      if (!ctx) {
        std::fprintf(stderr, "saturn-arena: %s\n", ctx.err().message().c_str());
        if (tls_named)
          return 1;
        std::fprintf(stderr, "saturn-arena: serving without TLS\n");
        break;
      }
      endpoints.push_back({saturn::net::address::parse(bind, static_cast<std::uint16_t>(p)).value(), std::move(*ctx)});
    }
  } else if (tls_wanted) {
    std::fprintf(stderr, "saturn-arena: no %s: serving without TLS\n", tls_cert.c_str());
  }
  if (h2c_port != 0)
    endpoints.push_back({saturn::net::address::parse(bind, static_cast<std::uint16_t>(h2c_port)).value(), std::nullopt,
                         saturn::http::cleartext::h2c});
  auto served = saturn::http::serve(*pool, routes, endpoints, opts);
  if (!served) {
    std::fprintf(stderr, "saturn-arena: %s:%u: %s\n", bind.c_str(), port, served.err().message().c_str());
    return 1;
  }
  return 0;
}
