// http::serve: binds the listeners, places one server::serve() per listener on its worker,
// and turns SIGINT / SIGTERM or a stop token into server::stop().
//
// Signals: a handler for each signal writes one byte to a pipe (write(2) is
// async-signal-safe); a task reads the pipe through the ring and stops the server. No
// thread of saturn's waits for signals, and the workers' signal masks need no change.
#include <saturn/http/serve.hpp>

#include <saturn/task/io.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/this_task.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace saturn::http {

namespace {

// The signal pipe, shared by every serve() that stops on signals (refcounted: the first
// installs the handlers, the last restores the old ones).
std::mutex g_sig_mutex;
int g_sig_refs = 0;
int g_sig_pipe[2] = {-1, -1};
struct sigaction g_old_int{}, g_old_term{};

extern "C" void on_stop_signal(int) {
  const int saved = errno;
  const char b = 1;
  // A full pipe already holds a pending stop: dropping this byte loses nothing.
  [[maybe_unused]] ssize_t n = ::write(g_sig_pipe[1], &b, 1);
  errno = saved;
}

/// Installs the handlers (first user); the pipe's read end, or an error.
result<int> acquire_signals() {
  std::lock_guard lock(g_sig_mutex);
  if (g_sig_refs == 0) {
    if (::pipe2(g_sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      return error{std::error_code(errno, std::system_category()), "http::serve: signal pipe"};
    struct sigaction sa{};
    sa.sa_handler = &on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, &g_old_int);
    ::sigaction(SIGTERM, &sa, &g_old_term);
  }
  ++g_sig_refs;
  return g_sig_pipe[0];
}

void release_signals() {
  std::lock_guard lock(g_sig_mutex);
  if (--g_sig_refs > 0)
    return;
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  ::close(g_sig_pipe[0]);
  ::close(g_sig_pipe[1]);
  g_sig_pipe[0] = g_sig_pipe[1] = -1;
}

/// Waits for a byte on the signal pipe, then stops `srv`. Ends early (no stop) when its
/// token is requested.
task<void> watch_signals(int fd, server& srv) {
  std::byte b[16];
  auto rd = saturn::read(fd, b);
  auto got = co_await rd;
  if (got && *got > 0)
    srv.stop();
}

task<int> serve_one(server& srv, net::tcp_listener& l, result<void>& outcome) {
  auto served = co_await srv.serve(l);
  if (!served)
    outcome = served.err();
  co_return 0;
}

task<result<void>> serve_all(thread_pool& pool, server& srv, std::vector<net::tcp_listener>& ls, int sig_fd) {
  std::optional<join_handle<void>> watcher;
  std::stop_source watch_stop;
  task_context& root = co_await this_task::context();
  // lifetime: watch_ctx lives in this frame, which awaits the watcher before it ends.
  task_context watch_ctx{root.sched, watch_stop.get_token(), root.live};
  if (sig_fd >= 0)
    watcher.emplace(spawn_in(watch_ctx, watch_signals(sig_fd, srv)));
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

result<void> serve(thread_pool& pool, const router& routes, const net::address& addr, serve_options opts) {
  const unsigned n = opts.listeners == 0 ? pool.threads() : opts.listeners;
  auto ls = bind_all(addr, n);
  if (!ls)
    return ls.err();
  int sig_fd = -1;
  if (opts.stop_on_signals) {
    auto fd = acquire_signals();
    if (!fd)
      return fd.err();
    sig_fd = *fd;
  }
  struct signals_guard {
    bool on;
    ~signals_guard() {
      if (on)
        release_signals();
    }
  } guard{sig_fd >= 0};
  server srv(routes, opts);
  std::optional<std::stop_callback<std::function<void()>>> on_stop;
  if (opts.stop.stop_possible())
    on_stop.emplace(opts.stop, std::function<void()>([&srv] { srv.stop(); }));
  if (opts.on_listening) {
    auto local = ls->front().local_address();
    opts.on_listening(local ? *local : addr);
  }
  return pool.block_on(serve_all(pool, srv, *ls, sig_fd));
}

}  // namespace saturn::http
