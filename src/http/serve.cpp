// http::serve: binds the listeners, places one server::serve() per listener on its worker,
// and turns SIGINT / SIGTERM or a stop token into server::stop().
//
// Signals: os::shutdown_signals (its handlers write to a pipe the ring reads); a task
// awaits it and stops the server. No thread of saturn's waits for signals, and the
// workers' signal masks need no change.
#include <saturn/http/serve.hpp>

#include <saturn/os/shutdown.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/this_task.hpp>

#include <algorithm>
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

task<int> serve_one(server& srv, net::tcp_listener& l, result<void>& outcome) {
  auto served = co_await srv.serve(l);
  if (!served)
    outcome = served.err();
  co_return 0;
}

task<result<void>> serve_all(thread_pool& pool, server& srv, std::vector<net::tcp_listener>& ls,
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
  for (unsigned i = 0; i < ls.size(); ++i)
    hs.push_back(pool.spawn_on(i % pool.threads(), serve_one(srv, ls[i], outcomes[i])));
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

result<void> serve(thread_pool& pool, const router& routes, const net::address& addr, const serve_options& opts) {
  const unsigned n = opts.listeners == 0 ? pool.threads() : opts.listeners;
  auto ls = bind_all(addr, n);
  if (!ls)
    return ls.err();
  std::optional<os::shutdown_signals> sigs;
  if (opts.stop_on_signals) {
    auto installed = os::shutdown_signals::install();
    if (!installed)
      return installed.err();
    sigs.emplace(std::move(*installed));
  }
  server srv(routes, opts);
  std::optional<std::stop_callback<std::function<void()>>> on_stop;
  if (opts.stop.stop_possible())
    on_stop.emplace(opts.stop, std::function<void()>([&srv] { srv.stop(); }));
  if (opts.on_listening) {
    auto local = ls->front().local_address();
    opts.on_listening(local ? *local : addr);
  }
  return pool.block_on(serve_all(pool, srv, *ls, sigs ? &*sigs : nullptr));
}

}  // namespace saturn::http
