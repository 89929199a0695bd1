// http::serve: binds the listeners, places one server::serve() per listener on its worker,
// and turns SIGINT / SIGTERM or a stop token into server::stop() — or, with
// serve_options::graceful, into os::graceful_stop's stop and server::drain().
//
// Signals: os::shutdown_signals (its handlers write to a pipe the ring reads); a task
// awaits it and stops the server. No thread of saturn's waits for signals, and the
// workers' signal masks need no change.
#include <saturn/http/serve.hpp>

#include <saturn/os/graceful.hpp>
#include <saturn/os/shutdown.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <vector>

namespace saturn::http {

namespace {

/// Waits for SIGINT / SIGTERM, then stops `srv`. Ends early (no stop) when its token is
/// requested.
task<void> watch_signals(const os::shutdown_signals& sigs, server& srv) {
  auto got = co_await sigs.wait();
  if (got)
    srv.stop();
}

/// A listener and the TLS context its connections handshake with (null: plain).
struct bound {
  net::tcp_listener listener;
  const tls::context* tls = nullptr;
  cleartext plain = cleartext::http1_and_h2c;
};

task<int> serve_one(server& srv, bound& b, result<void>& outcome) {
  auto served = b.tls != nullptr ? srv.serve(b.listener, *b.tls) : srv.serve(b.listener, b.plain);
  auto r = co_await std::move(served);
  if (!r)
    outcome = r.err();
  co_return 0;
}

task<result<void>> serve_all(thread_pool& pool, server& srv, std::vector<bound>& ls, unsigned per_endpoint,
                              const os::shutdown_signals* sigs) {
  std::optional<join_handle<void>> watcher;
  std::stop_source watch_stop;
  task_context& root = co_await this_task::context();
  // lifetime: watch_ctx lives in this frame, which awaits the watcher before it ends.
  task_context watch_ctx{root.sched, watch_stop.get_token(), root.live};
  if (sigs != nullptr)
    watcher.emplace(spawn_in(watch_ctx, watch_signals(*sigs, srv)));
  std::vector<result<void>> outcomes(ls.size());
  std::vector<join_handle<int>> hs;
  hs.reserve(ls.size());
  // Each endpoint's listeners spread over the workers the same way: listener i of an
  // endpoint on worker i.
  for (unsigned i = 0; i < ls.size(); ++i)
    hs.push_back(pool.spawn_on((i % per_endpoint) % pool.threads(), serve_one(srv, ls[i], outcomes[i])));
  for (auto& h : hs) {
    int ignored = co_await std::move(h);
    (void)ignored;
  }
  if (watcher) {
    watch_stop.request_stop();
    co_await std::move(*watcher);
  }
  for (auto& o : outcomes)
    if (!o)
      co_return o.err();
  co_return result<void>{};
}

/// The graceful way: the serve() calls are graceful_stop's work, drain_at_stop its
/// acceptor; a failing serve() raises SIGTERM so the stop runs.
task<void> serve_counted(server& srv, bound& b, result<void>& outcome) {
  auto one = serve_one(srv, b, outcome);
  (void)co_await std::move(one);
  if (!outcome)
    ::kill(::getpid(), SIGTERM);
}

task<result<void>> serve_graceful(thread_pool& pool, server& srv, std::vector<bound>& ls, unsigned per_endpoint) {
  std::vector<result<void>> outcomes(ls.size());
  os::graceful_stop gs(pool);
  gs.spawn_acceptor(drain_at_stop(gs, srv));
  for (unsigned i = 0; i < ls.size(); ++i)
    gs.spawn_on((i % per_endpoint) % pool.threads(), serve_counted(srv, ls[i], outcomes[i]));
  // The server cancels the handlers still running when stop_grace is over; the stop's own
  // deadline, a second later, is the backstop.
  // lifetime: the task keeps the list, so its array must outlive the co_await (a named
  // initializer_list's array lives as long as it does).
  const std::initializer_list<int> signals = {SIGINT, SIGTERM};
  auto stop = gs.stop_on_signals(signals, srv.options().stop_grace + std::chrono::seconds(1));
  auto stopped = co_await std::move(stop);
  if (!stopped)
    co_return stopped.err();
  for (auto& o : outcomes)
    if (!o)
      co_return o.err();
  co_return result<void>{};
}

/// `n` listeners on `addr` (SO_REUSEPORT when more than one). A port of 0 is chosen by the
/// first bind and reused by the others.
result<std::vector<net::tcp_listener>> bind_all(const net::address& addr, unsigned n) {
  net::listen_options lo;
  lo.reuse_port = n > 1;
  lo.multishot = false;  // one accept per call: a burst of connects cannot pass max_connections
  std::vector<net::tcp_listener> ls;
  net::address at = addr;
  if (n > 1 && addr.port() != 0) {
    // SO_REUSEPORT would let this process join a port another process of the same user
    // listens on with SO_REUSEPORT (the kernel would split the connections between
    // them): a plain bind first proves the port is free.
    auto probe = net::tcp_listener::bind(addr);
    if (!probe)
      return probe.err();
  }
  for (unsigned i = 0; i < n; ++i) {
    auto l = net::tcp_listener::bind(at, lo);
    if (!l)
      return l.err();
    if (i == 0 && at.port() == 0) {
      auto local = l->local_address();
      if (!local)
        return local.err();
      at = *local;
    }
    ls.push_back(std::move(*l));
  }
  return ls;
}

}  // namespace

task<void> drain_at_stop(const os::graceful_stop& gs, server& srv) {
  while (!gs.stopping()) {
    auto wait = sleep_for(std::chrono::hours(1));
    auto waited = co_await wait;
    if (!waited)
      break;
  }
  srv.drain();
}

result<void> serve(thread_pool& pool, const router& routes, const net::address& addr, const serve_options& opts) {
  const endpoint one{addr};
  return serve(pool, routes, std::span<const endpoint>(&one, 1), opts);
}

result<void> serve(thread_pool& pool, const router& routes, std::span<const endpoint> endpoints,
                   const serve_options& opts) {
  if (endpoints.empty())
    return error{std::make_error_code(std::errc::invalid_argument), "serve: no address to listen on"};
  const unsigned n = opts.listeners == 0 ? pool.threads() : opts.listeners;
  std::vector<bound> ls;
  std::vector<net::address> listening;
  for (const endpoint& ep : endpoints) {
    if (ep.tls && !ep.tls->is_server())
      return error{std::make_error_code(std::errc::invalid_argument), "serve: an endpoint's TLS context is not a server context"};
    auto got = bind_all(ep.addr, n);
    if (!got)
      return got.err();
    auto local = got->front().local_address();
    listening.push_back(local ? *local : ep.addr);
    for (auto& l : *got)
      ls.push_back(bound{std::move(l), ep.tls ? &*ep.tls : nullptr, ep.plain});
  }
  const bool graceful = opts.graceful && opts.stop_on_signals;
  std::optional<os::shutdown_signals> sigs;
  if (opts.stop_on_signals && !graceful) {
    auto installed = os::shutdown_signals::install();
    if (!installed)
      return installed.err();
    sigs.emplace(std::move(*installed));
  }
  server srv(routes, opts);
  std::optional<std::stop_callback<std::function<void()>>> on_stop;
  if (opts.stop.stop_possible()) {
    if (graceful)
      on_stop.emplace(opts.stop, std::function<void()>([] { ::kill(::getpid(), SIGTERM); }));
    else
      on_stop.emplace(opts.stop, std::function<void()>([&srv] { srv.stop(); }));
  }
  if (opts.on_listening)
    for (const net::address& a : listening)
      opts.on_listening(a);
  if (graceful)
    return pool.block_on(serve_graceful(pool, srv, ls, n));
  return pool.block_on(serve_all(pool, srv, ls, n, sigs ? &*sigs : nullptr));
}

}  // namespace saturn::http
