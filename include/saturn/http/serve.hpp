/// \file
/// `http::serve`: a whole HTTP/1.1 service in one call — the layout that serves fastest on
/// a thread_pool (one SO_REUSEPORT listener per worker, each accepting its own
/// connections, whose tasks start on that worker), a connection limit that holds, and a
/// graceful stop on SIGINT / SIGTERM.
///
///     saturn::thread_pool pool;
///     saturn::http::router routes;
///     routes.get("/hello", [](const saturn::http::request&) -> saturn::task<saturn::http::response> {
///       co_return saturn::http::response::text("hello\n");
///     });
///     auto served = saturn::http::serve(pool, routes, saturn::net::address::loopback_v4(8080));
///     if (!served) std::fprintf(stderr, "%s\n", served.err().message().c_str());
#pragma once

#include <saturn/http/router.hpp>
#include <saturn/http/server.hpp>
#include <saturn/net/address.hpp>
#include <saturn/result.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/tls/context.hpp>

#include <functional>
#include <optional>
#include <span>
#include <stop_token>

namespace saturn::os {
class graceful_stop;
}

namespace saturn::http {

/// How serve() listens and when it stops, on top of the server's own options.
struct serve_options : server_options {
  /// How many SO_REUSEPORT listeners: 0 means one per pool worker (each worker accepts
  /// its own connections, and their tasks start there); 1 means one listener shared by
  /// the pool.
  unsigned listeners = 0;
  /// Stop gracefully on SIGINT and SIGTERM: accepting stops, handlers in flight are
  /// cancelled and have stop_grace to answer, then serve() returns success. serve()
  /// installs its own handlers for the two signals while it runs and restores the old
  /// ones when it returns; the signals must not be blocked in the pool's threads.
  bool stop_on_signals = true;
  /// Stop through os::graceful_stop instead (saturn/os/graceful.hpp), when
  /// stop_on_signals is on too: SIGINT and SIGTERM are read from a signalfd, so the
  /// caller must have blocked them (os::block_signals) before the pool started. At the
  /// signal the server drains (server::drain: the listeners close, new connections are
  /// refused, idle connections close, requests in flight get stop_grace to finish), then
  /// serve() returns success. A `stop` request or a listener's failure raises SIGTERM in
  /// the process, so it takes the same way.
  bool graceful = false;
  /// Another way to stop (any thread): serving ends as on a signal when it is requested.
  std::stop_token stop{};
  /// Called once every listener is bound and before the first connection is accepted,
  /// once per endpoint in order, with the address listened on (its port is the one the kernel chose when `addr` had
  /// port 0). On the thread that called serve().
  std::function<void(const net::address&)> on_listening{};
};

/// One address served: cleartext HTTP/1.1 and h2c, or HTTPS (HTTP/1.1 and, by ALPN, HTTP/2) when
/// `tls` holds a server context.
struct endpoint {
  net::address addr;
  std::optional<tls::context> tls{};
  /// What a cleartext endpoint speaks (HTTP/1.1 and h2c by default; cleartext::h2c for an
  /// HTTP/2-only port). Ignored with `tls` (ALPN chooses there).
  cleartext plain = cleartext::http1_and_h2c;
};

/// Serves `routes` on `addr` with `pool` until a stop (see serve_options) and returns
/// once every connection has ended. Returns the bind error ("bind 127.0.0.1:80:
/// Permission denied") without serving, or an accept error that is not transient.
///
/// Threading: blocks the calling thread, which must not be one of `pool`'s workers
/// (call it from main, as thread_pool::block_on). `routes` must not change while it runs.
/// Listening sockets accept one connection per call (no multishot accept), so
/// max_connections bounds the descriptors exactly.
result<void> serve(thread_pool& pool, const router& routes, const net::address& addr,
                   const serve_options& opts = {});

/// As above, on several addresses at once — plain and HTTPS side by side (HttpArena's 8080
/// and 8081), each with its listeners, all sharing one server: its connection limit,
/// timeouts and stop. on_listening is called once per endpoint, in order. Returns the
/// first bind error before serving anything.
///
///     saturn::thread_pool pool;
///     saturn::http::router routes;
///     auto ctx = saturn::tls::context::server({.certificates = {{"cert.pem", "key.pem"}}, .alpn = {"http/1.1"}});
///     if (!ctx) return;  // the error names the file and OpenSSL's reason
///     std::vector<saturn::http::endpoint> eps{{saturn::net::address::loopback_v4(8080)},
///                                             {saturn::net::address::loopback_v4(8443), std::move(*ctx)}};
///     auto served = saturn::http::serve(pool, routes, eps);
result<void> serve(thread_pool& pool, const router& routes, std::span<const endpoint> endpoints,
                   const serve_options& opts = {});

/// An acceptor for os::graceful_stop (`gs.spawn_acceptor(drain_at_stop(gs, srv))`): it
/// waits until the stop cancels it, then calls srv.drain(). The serve() calls of `srv` are
/// then the stop's work (gs.spawn_on). Both must outlive the task.
task<void> drain_at_stop(const os::graceful_stop& gs, server& srv);

}  // namespace saturn::http
