/// \file
/// The HTTP/1.1 server: accepts on a tcp_listener and serves each connection as its own
/// task — keep-alive, pipelining (requests of one read are answered in order and their
/// responses coalesced into one send), handlers awaited as coroutines, the limits of
/// parser_limits (431 / 413 / 400 and close), a header-read timeout, a keep-alive idle
/// timeout and a send timeout (the connection is closed), and a connection limit
/// (accepting stops while the limit is reached). Requests with no handler get 404, 405 with Allow, or 501 (see
/// router); `OPTIONS *` gets 200 with Allow listing the server's methods.
///
/// Stop: stop() stops accepting, requests the stop token every handler runs under (a
/// handler awaiting a timer or a socket resumes at once with operation_canceled and may
/// still answer: that answer is sent, with up to `stop_grace` for a handler to finish and
/// its response to leave), and shuts down every connection waiting for a request at once;
/// serve() returns once all connection tasks have ended. The connections' own
/// reads, sends and closes are not cancellable: a close always runs.
///
/// Threading: serve() runs as a task on any saturn scheduler (thread_pool io mode: the
/// connections are spawned onto the pool and spread by work stealing). stop() may be
/// called from any thread. Every send passes MSG_NOSIGNAL: a client that closed never
/// raises SIGPIPE.
///
/// Most services need not build this by hand: http::serve (serve.hpp) binds a listener per
/// worker, runs one serve() on each and stops on SIGINT / SIGTERM.
#pragma once

#include <saturn/http/h2_options.hpp>
#include <saturn/http/parser.hpp>
#include <saturn/http/router.hpp>
#include <saturn/net/tcp_listener.hpp>
#include <saturn/result.hpp>
#include <saturn/sync/semaphore.hpp>
#include <saturn/task/scheduler.hpp>
#include <saturn/task/task.hpp>
#include <saturn/tls/context.hpp>

#include <saturn/detail/atomic.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

namespace saturn::http {

/// How to serve.
struct server_options {
  std::string server_name = "saturn";             ///< the Server field of every response
  /// Accepting pauses while this many are open. It bounds the descriptors exactly with a
  /// listener that accepts one connection per call (listen_options::multishot = false, as
  /// saturn-http listens); a multishot accept may take a burst of connects past it.
  std::size_t max_connections = 10000;
  std::chrono::milliseconds header_timeout{10000};  ///< first byte of a request → its last byte (head and body)
  std::chrono::milliseconds idle_timeout{60000};    ///< a kept-alive connection waiting for a request
  /// A response that makes no progress for this long (the client stopped reading) closes
  /// the connection, as nginx's send_timeout: a slow reader cannot hold it forever.
  std::chrono::milliseconds send_timeout{10000};
  /// At stop(): how long a connection whose handler is running or whose response is being
  /// sent keeps its socket, so the (cancelled) handler's answer reaches the client.
  std::chrono::milliseconds stop_grace{1000};
  parser_limits limits{};                           ///< 431 / 413 thresholds
  std::size_t read_buffer = 16 * 1024;              ///< initial receive buffer per connection (grows for bodies)
  /// Read through a multishot receive into the loop's provided buffers (one SQE per
  /// connection, not per read; the bytes are copied into the connection's buffer) instead
  /// of one recv SQE per read. Off by default: on a thread_pool a stolen connection task
  /// must hop back to the loop that owns its multishot receive, which cost more than the
  /// recv SQEs it saves (docs/decisions/http-receive.md).
  bool multishot_receive = false;
  /// Try a non-blocking send(2) from the connection's task before the ring's send: a batch
  /// that fits the socket buffer (the usual case) then costs no CQE and no task wake.
  bool direct_send = true;
  /// What serve(listener) speaks on a cleartext listener (HTTP/1.1 and h2c by default).
  cleartext plain = cleartext::http1_and_h2c;
  /// HTTP/2's limits and windows (h2_options.hpp).
  h2_options h2{};
};

namespace detail {
struct connection_registry;
struct conn_entry;
struct server_metrics;
}

/// See the file comment.
class server {
 public:
  /// `r` must outlive the server and not change while it serves.
  explicit server(const router& r, server_options opts = {});
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Accepts connections from `listener` and serves them until stop() (or the task's stop
  /// token) ends it; then closes every connection and returns once all have ended.
  /// Returns an accept error that is not transient (which also ends the other serve()
  /// calls). Suspends; await from a saturn task.
  ///
  /// Several listeners: call serve() once per listener, concurrently, on one server (for
  /// instance one SO_REUSEPORT listener per pool worker, each serve() running on its
  /// worker: a connection's task then starts on the worker that accepted it). They share
  /// the connection limit, the timeouts and stop(); each returns once every connection has
  /// ended. All serve() calls run on the same scheduler.
  task<result<void>> serve(net::tcp_listener& listener);
  /// As serve(listener), speaking `protocols` on it instead of options().plain (one
  /// server may serve an HTTP/1.1 port and an h2c-only one).
  task<result<void>> serve(net::tcp_listener& listener, cleartext protocols);
  /// As serve(listener), over TLS: every connection accepted from `listener` handshakes
  /// with `tls` (a server context; the header timeout bounds the handshake) before its
  /// first request. With "h2" in the context's ALPN list, a client that picks it is
  /// served HTTP/2; with no ALPN list, or "http/1.1" picked, HTTP/1.1. A response
  /// that switches protocols (101) cannot be sent over TLS yet and becomes 501. `tls` must
  /// outlive the call. Plain and TLS listeners may be served by one server.
  task<result<void>> serve(net::tcp_listener& listener, const tls::context& tls);
  /// Ends serve(): stops accepting, cancels the handlers in flight (their awaits end with
  /// std::errc::operation_canceled) and closes every connection. Any thread; does not
  /// suspend or wait (serve() returns once the connections have ended).
  void stop() noexcept;
  /// The gentle stop: stops accepting (the listeners are shut down, so new connections
  /// are refused) and closes every connection waiting for a request or still reading
  /// one (its head or body not all in yet), but lets the handlers in flight run on: a busy
  /// connection closes once its answer has left. When
  /// stop_grace has passed (counted from this call), the handlers still running are
  /// cancelled as by stop(). stop() after drain() cancels them at once. serve() returns
  /// once every connection has ended. Any thread; does not suspend or wait.
  void drain() noexcept;
  /// Connections open now. Any thread.
  std::size_t connections() const noexcept;
  /// The options in force.
  const server_options& options() const noexcept { return m_opts; }

 private:
  task<result<void>> serve_on(net::tcp_listener& listener, const tls::context* tls, cleartext protocols);
  task<void> serve_connection(net::tcp_stream s, cleartext protocols);
  task<void> serve_tls_connection(net::tcp_stream s, const tls::context* ctx);
  /// One connection's protocol over its transport (src/http/conn_io.hpp), defined and
  /// instantiated in connection.cpp.
  template <class Io>
  task<void> run_connection(Io& io, detail::conn_entry& entry, cleartext protocols);
  /// One HTTP/2 connection over its transport, `in` holding what was received already
  /// (src/http/h2_connection.cpp).
  template <class Io>
  task<void> run_h2(Io& io, detail::conn_entry& entry, std::span<const std::byte> received);
  task<void> sweep();
  /// Marks the stop and shuts every listener down (their accepts end). Any thread.
  void shut_listeners() noexcept;
  /// Records the time of the first stop (the start of stop_grace); stopping() from then
  /// on. Any thread.
  void mark_stopping() noexcept;
  /// True once stop() was called or a serve() ended. Any thread.
  bool stopping() const noexcept {
    // ordering: acquire pairs with mark_stopping's release (the listeners published before).
    return m_stop_ms.load(std::memory_order_acquire) != 0;
  }
  /// mark_stopping(), cancels the handlers, and shuts down the connections the stop ends
  /// now. Any thread.
  void begin_stop() noexcept;
  /// One sweep of the registry with the timeouts, and the stop's rules once stopping.
  void sweep_now(std::int64_t now) noexcept;

  const router& m_router;
  server_options m_opts;
  std::unique_ptr<detail::connection_registry> m_registry;
  std::unique_ptr<detail::server_metrics> m_metrics;  // counters in metrics::registry::global()
  semaphore m_slots;
  saturn::detail::atomic<std::int64_t> m_stop_ms{0};  // coarse ms of the first stop (0: not stopping)
  std::vector<int> m_listen_fds;  // the listeners being served (guarded by m_registry->mutex)
  bool m_started = false;         // the first serve() ran (guarded by m_registry->mutex)
  std::stop_source m_stop;  // requested by stop() and when serve() ends
  // Requested by drain() and stop(): HTTP/2 connections say GOAWAY (no new streams) and
  // close once their streams are done.
  std::stop_source m_drain;
  // The sweeper and every handler run under it (m_stop's token), so stop() ends the
  // sweeper's sleep and cancels handlers in flight; the connection tasks themselves run
  // under the root context. lifetime: a member, so it outlives all of them (serve() joins
  // the sweeper and waits for every connection).
  task_context m_stop_ctx;
};

}  // namespace saturn::http
