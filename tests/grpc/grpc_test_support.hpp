// What the channel tests share: a gRPC server program run as a child process (its port on
// the first line of its stdout, stopped by closing its stdin), and saturn's own gRPC
// server on a pool of its own, cleartext or TLS.
#pragma once

#include "support/run_program.hpp"

#include <saturn/grpc.hpp>
#include <saturn/http/server.hpp>
#include <saturn/net/tcp_listener.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/tls/context.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace grpc_test {

/// A server program that prints its port and serves until its stdin ends.
class child_server {
 public:
  explicit child_server(std::vector<std::string> argv) {
    int out[2], in[2];
    if (::pipe(out) != 0 || ::pipe(in) != 0)
      return;
    m_pid = ::fork();
    if (m_pid == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[1]);
      ::close(out[0]);
      std::vector<char*> args;
      for (auto& a : argv)
        args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    m_in = in[1];
    // The port's line; the pipe stays open while the child runs (a write after we closed
    // it would kill the child with EPIPE).
    m_out = out[0];
    std::string line;
    char ch = 0;
    while (line.size() < 16 && ::read(m_out, &ch, 1) == 1 && ch != '\n')
      line.push_back(ch);
    m_port = std::atoi(line.c_str());
  }
  child_server(const child_server&) = delete;
  child_server& operator=(const child_server&) = delete;
  ~child_server() {
    if (m_in >= 0)
      ::close(m_in);  // its stdin ends: it stops
    int status = 0;
    if (m_pid > 0)
      ::waitpid(m_pid, &status, 0);
    if (m_out >= 0)
      ::close(m_out);
  }
  int port() const { return m_port; }

 private:
  pid_t m_pid = -1;
  int m_in = -1;
  int m_out = -1;
  int m_port = 0;
};

/// saturn's HTTP server with `svc` mounted, on 127.0.0.1 (a free port), over TLS when
/// `tls` is given; stopped when destroyed.
class saturn_server {
 public:
  explicit saturn_server(const saturn::grpc::service& svc, std::optional<saturn::tls::context> tls = std::nullopt)
      : m_tls(std::move(tls)) {
    std::signal(SIGPIPE, SIG_IGN);
    svc.mount(m_routes);
    m_server.emplace(m_routes);
    auto l = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(0));
    if (!l)
      throw std::runtime_error(l.err().message());
    m_port = l->local_address()->port();
    m_listener.emplace(std::move(*l));
    m_done.emplace(m_pool.spawn(run(*m_server, *m_listener, m_tls ? &*m_tls : nullptr)));
  }
  saturn_server(const saturn_server&) = delete;
  saturn_server& operator=(const saturn_server&) = delete;
  ~saturn_server() {
    m_server->stop();
    m_pool.block_on(join(std::move(*m_done)));
  }
  std::uint16_t port() const { return m_port; }
  std::string target() const { return "127.0.0.1:" + std::to_string(m_port); }

 private:
  static saturn::task<bool> run(saturn::http::server& s, saturn::net::tcp_listener& l,
                                const saturn::tls::context* tls) {
    if (tls != nullptr) {
      auto r = co_await s.serve(l, *tls);
      co_return r.has_value();
    }
    auto r = co_await s.serve(l);
    co_return r.has_value();
  }
  static saturn::task<bool> join(saturn::join_handle<bool> h) { co_return co_await std::move(h); }

  saturn::thread_pool m_pool{{.threads = 2, .mode = saturn::pool_mode::io}};
  std::optional<saturn::tls::context> m_tls;
  saturn::http::router m_routes;
  std::optional<saturn::http::server> m_server;
  std::optional<saturn::net::tcp_listener> m_listener;
  std::uint16_t m_port = 0;
  std::optional<saturn::join_handle<bool>> m_done;
};

/// How many slow calls the test services saw cancelled, and how many endless streams they
/// saw stopped (the handlers count, the tests read).
inline std::atomic<int> slow_cancelled{0};
inline std::atomic<int> forever_stopped{0};

using saturn_test::run_command;

/// True when Python's grpcio (python3-grpcio) can be imported.
inline bool have_grpcio() {
  return run_command("/usr/bin/python3 -c 'import grpc' 2>/dev/null && echo yes").first == "yes\n";
}

}  // namespace grpc_test
