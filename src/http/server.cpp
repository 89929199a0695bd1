// server: the accept loop (connection limit through a semaphore), the timeout sweeper, and
// stop. A connection's own protocol is in connection.cpp.
#include <saturn/http/server.hpp>

#include <saturn/task/join_handle.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

#include "http/connection_registry.hpp"
#include "http/server_metrics.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <optional>

namespace saturn::http {

server::server(const router& r, server_options opts)
    : m_router(r),
      m_opts(std::move(opts)),
      m_registry(std::make_unique<detail::connection_registry>()),
      m_metrics(std::make_unique<detail::server_metrics>(r)),
      m_slots(m_opts.max_connections) {}

server::~server() = default;

std::size_t server::connections() const noexcept { return m_registry->count.load(std::memory_order_relaxed); }

void server::stop() noexcept {
  shut_listeners();
  begin_stop();
}

void server::drain() noexcept {
  shut_listeners();
  m_drain.request_stop();              // HTTP/2 connections: GOAWAY, no new streams
  sweep_now(detail::coarse_now_ms());  // the idle connections close now, the busy ones once answered
}

void server::shut_listeners() noexcept {
  // A pending accept ends when its listening socket is shut down (EINVAL), and a connect
  // to it is refused from then on; the listener itself stays owned (and is closed) by
  // the caller.
  // lifetime: serve() removes its listener's fd under this mutex before its caller may
  // close the listener, so every descriptor shut down here is still a listener's.
  std::lock_guard lock(m_registry->mutex);
  mark_stopping();
  for (int fd : m_listen_fds)
    ::shutdown(fd, SHUT_RDWR);
}

void server::mark_stopping() noexcept {
  std::int64_t expected = 0;
  // 0 means "not stopping"; the coarse clock is never 0 after boot, but be sure.
  const std::int64_t now = std::max<std::int64_t>(detail::coarse_now_ms(), 1);
  // ordering: release pairs with stopping()'s acquire; acquire on failure is unneeded.
  m_stop_ms.compare_exchange_strong(expected, now, std::memory_order_release, std::memory_order_relaxed);
}

void server::begin_stop() noexcept {
  mark_stopping();
  m_drain.request_stop();
  // Cancel the handlers in flight (their awaits end with operation_canceled; what they
  // answer is still sent), then shut down every connection that waits for a request: it
  // ends at its pending read. Busy ones follow within stop_grace (sweep_now).
  m_stop.request_stop();
  sweep_now(detail::coarse_now_ms());
}

void server::sweep_now(std::int64_t now) noexcept {
  detail::sweep_limits l{m_opts.header_timeout.count(), m_opts.idle_timeout.count(), m_opts.send_timeout.count()};
  // ordering: relaxed; only the time is needed (the registry's mutex orders the rest).
  l.stop_ms = m_stop_ms.load(std::memory_order_relaxed);
  l.grace_ms = m_opts.stop_grace.count();
  m_registry->sweep(now, l);
}

// The sweeper wakes a few times per shortest timeout (at least every second, at most
// every 10 ms), so a timeout is enforced within about a quarter of its length.
task<void> server::sweep() {
  auto shortest = std::min({m_opts.header_timeout, m_opts.idle_timeout, m_opts.send_timeout});
  auto tick = std::clamp(shortest / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  while (!stopping()) {
    auto r = co_await sleep_for(tick);
    if (!r)
      break;
    sweep_now(detail::coarse_now_ms());
  }
}

task<result<void>> server::serve(net::tcp_listener& listener) { return serve_on(listener, nullptr, m_opts.plain); }

task<result<void>> server::serve(net::tcp_listener& listener, cleartext protocols) {
  return serve_on(listener, nullptr, protocols);
}

task<result<void>> server::serve(net::tcp_listener& listener, const tls::context& tls) {
  if (!tls.is_server())
    co_return error{std::make_error_code(std::errc::invalid_argument), "https serve: not a TLS server context"};
  auto served = serve_on(listener, &tls, m_opts.plain);
  co_return co_await std::move(served);
}

task<result<void>> server::serve_on(net::tcp_listener& listener, const tls::context* tls, cleartext protocols) {
  task_context& ctx = co_await this_task::context();
  task_context& root = ctx.sched->root_context();
  // The first serve() of a server sets up the handlers' context and starts the sweeper;
  // the others (one per listener, see server.hpp) share them.
  bool first = false;
  {
    std::lock_guard lock(m_registry->mutex);
    if (!m_started) {
      m_started = first = true;
      m_stop_ctx = task_context{root.sched, m_stop.get_token(), root.live};
    }
    m_listen_fds.push_back(listener.fd());
    if (stopping())
      ::shutdown(listener.fd(), SHUT_RDWR);  // stop() ran before the fd was published
  }
  std::optional<join_handle<void>> sweeper;
  if (first)
    sweeper.emplace(spawn_in(m_stop_ctx, sweep()));
  result<void> outcome{};
  while (!stopping()) {
    auto accepted = co_await listener.accept();
    if (!accepted) {
      if (accepted.err() == std::errc::operation_canceled || stopping())
        break;
      if (accepted.err() == std::errc::connection_aborted || accepted.err() == std::errc::interrupted)
        continue;
      outcome = accepted.err();
      break;
    }
    // The connection limit: at the limit, the connection just accepted waits for a free
    // slot and this loop accepts no more (the kernel's backlog holds the rest); the slot
    // is given back when a connection ends. The slot is taken after the accept, not
    // before, so that with several listeners (one serve() each) no loop holds a slot
    // while it waits for a connection that the kernel may route to another listener.
    auto slot = m_slots.acquire();
    auto got = co_await slot;
    if (!got)
      break;  // the accepted connection is closed unserved
    if (stopping()) {
      m_slots.release();
      break;
    }
    if (tls != nullptr)
      spawn_in(root, serve_tls_connection(std::move(*accepted), tls)).detach();
    else
      spawn_in(root, serve_connection(std::move(*accepted), protocols)).detach();
  }
  // An accept error or this serve()'s own cancellation stops the server outright; a
  // stop() has done so already, and a drain() leaves the handlers running (below).
  if (!outcome || !stopping())
    begin_stop();
  {
    std::lock_guard lock(m_registry->mutex);
    m_listen_fds.erase(std::find(m_listen_fds.begin(), m_listen_fds.end(), listener.fd()));
  }
  // Close every connection and wait until all have ended (each ends within one round trip
  // of its ring once its socket is shut down; a busy one once its answer left, or when
  // stop_grace is over: then its handler is cancelled too).
  while (connections() > 0) {
    const std::int64_t now = detail::coarse_now_ms();
    // ordering: relaxed; set before (by this thread or under the registry's mutex).
    if (now - m_stop_ms.load(std::memory_order_relaxed) >= m_opts.stop_grace.count())
      m_stop.request_stop();
    sweep_now(now);
    auto s = sleep_for(std::chrono::milliseconds(1));
    auto slept = co_await s;
    if (!slept)
      m_stop.request_stop();  // this serve() is cancelled: wait for no handler any more
  }
  if (sweeper)
    co_await std::move(*sweeper);
  co_return outcome;
}

}  // namespace saturn::http
