// The timer and echo scenarios, and the scenario registry (scenarios.hpp).
#include "sim/scenarios.hpp"

#include <saturn/loop/event_loop.hpp>
#include <saturn/net.hpp>
#include <saturn/task.hpp>

#include <cerrno>
#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace saturn::sim_scenarios {
namespace {

using namespace std::chrono_literals;

[[noreturn]] void scenario_fail(const std::string& what) { throw std::runtime_error(what); }

task<void> timer_worker(sim::world& w, int* done) {
  const int steps = 5 + static_cast<int>(w.random_below(20));
  for (int i = 0; i < steps; ++i) {
    switch (w.random_below(5)) {
      case 0: {
        auto r = co_await nop();
        if (!r)
          scenario_fail("a NOP failed: " + r.err().message());
        break;
      }
      case 1:
        co_await sleep_for(std::chrono::microseconds(w.random_below(500)));
        break;
      case 2: {
        const auto t0 = clock::now();
        const auto d = std::chrono::microseconds(1 + w.random_below(300));
        auto r = co_await kernel_timeout(d);
        if (!r)
          scenario_fail("a kernel timeout failed: " + r.err().message());
        if (clock::now() - t0 < d)
          scenario_fail("a kernel timeout expired early");
        break;
      }
      case 3: {
        auto r = co_await with_timeout(std::chrono::microseconds(w.random_below(40)),
                                       sleep_for(std::chrono::microseconds(w.random_below(40))));
        (void)r;
        break;
      }
      default: {
        // The callback tier's timer, cancelled at a seed-chosen moment before or after its
        // deadline: a cancel_after that says it disarmed the timer means it never runs.
        event_loop* loop = event_loop::current();
        auto ran = std::make_shared<int>(0);
        const auto d = std::chrono::microseconds(1 + w.random_below(300));
        const event_loop::timer_handle h = loop->after(d, [ran] { ++*ran; });
        co_await sleep_for(std::chrono::microseconds(w.random_below(300)));
        const bool disarmed = loop->cancel_after(h);
        co_await sleep_for(d + std::chrono::microseconds(10));  // past its deadline either way
        if (disarmed && *ran != 0)
          scenario_fail("a callback timer ran after cancel_after said it was disarmed");
        if (!disarmed && *ran != 1)
          scenario_fail("a callback timer that was not disarmed ran " + std::to_string(*ran) + " times");
      }
    }
  }
  ++*done;
}

task<void> echo_connection(net::tcp_stream s, int* closed) {
  for (;;) {
    auto chunk = co_await s.receive();
    if (!chunk || chunk->empty())
      break;
    auto w = co_await s.send(*chunk);
    if (!w)
      break;
  }
  ++*closed;
  co_await s.close();
}

task<void> echo_server(net::tcp_listener* l, int clients, int* closed) {
  std::vector<join_handle<void>> hs;
  for (int i = 0; i < clients; ++i) {
    auto c = co_await l->accept();
    if (!c)
      scenario_fail("accept: " + c.err().message());
    hs.push_back(spawn(echo_connection(std::move(*c), closed)));
  }
  for (auto& h : hs)
    co_await h;
}

task<void> echo_client(sim::world& w, std::uint16_t port, int id) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  if (!c)
    scenario_fail("connect: " + c.err().message());
  const int rounds = 1 + static_cast<int>(w.random_below(4));
  for (int round = 0; round < rounds; ++round) {
    const std::string msg = "client " + std::to_string(id) + " round " + std::to_string(round) +
                            std::string(w.random_below(5000), 'x');
    auto s = co_await c->send(std::as_bytes(std::span(msg)));
    if (!s)
      scenario_fail("send: " + s.err().message());
    std::string back;
    while (back.size() < msg.size()) {
      auto chunk = co_await c->receive();  // a multishot receive, armed from now on
      if (!chunk || chunk->empty())
        scenario_fail("the echo ended early");
      back.append(reinterpret_cast<const char*>(chunk->data()), chunk->size());
    }
    if (back != msg)
      scenario_fail("the echo differs from what was sent");
  }
  if (w.random_below(3) == 0)
    co_await sleep_for(std::chrono::microseconds(w.random_below(100)));
  co_await c->close();  // the receive is still armed: close must cancel it
}

}  // namespace

task<void> timers_scenario(sim::world& w) {
  int done = 0;
  std::vector<join_handle<void>> hs;
  for (int i = 0; i < 8; ++i)
    hs.push_back(spawn(timer_worker(w, &done)));
  for (auto& h : hs)
    co_await h;
  if (done != 8)
    scenario_fail(std::to_string(done) + " of 8 timer tasks finished");
}

task<void> echo_scenario(sim::world& w) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  if (!l)
    scenario_fail("bind: " + l.err().message());
  const std::uint16_t port = l->local_address()->port();
  const int n = 1 + static_cast<int>(w.random_below(5));
  int closed = 0;
  auto server = spawn(echo_server(&*l, n, &closed));
  std::vector<join_handle<void>> hs;
  for (int i = 0; i < n; ++i)
    hs.push_back(spawn(echo_client(w, port, i)));
  // Every client is awaited before a failure is rethrown.
  std::exception_ptr first;
  co_await await_all(hs, first);
  // After a failure the server may wait for a client that never came: leave it suspended
  // (the runtime's teardown cancels its accept and destroys it; it does not touch `l`).
  if (first)
    std::rethrow_exception(first);
  co_await server;  // returns once every connection saw its client's close
  if (closed != n)
    scenario_fail(std::to_string(closed) + " of " + std::to_string(n) + " connections closed");
}

const std::vector<scenario>& all() {
  static const std::vector<scenario> list = [] {
    std::vector<scenario> v;
    v.push_back({"timers", timers_scenario, {}});
    v.push_back({"echo", echo_scenario, {}});
    sim::options http;
    // Every client finishes within a few virtual seconds; past 60 something is stuck (the
    // server's periodic sweep keeps time moving, so it shows as the time limit).
    http.time_limit = std::chrono::seconds(60);
    v.push_back({"http", http_server_scenario, http});
    v.push_back({"http-bulk", http_bulk_scenario, http});
    sim::options faulty = http;
    using saturn::testing::op_kind;
    faulty.faults = {{op_kind::recv, ECONNRESET, 0.02}, {op_kind::recv, 0, 0.3},        {op_kind::send, 0, 0.3},
                     {op_kind::send, EPIPE, 0.01},      {op_kind::accept, ECONNABORTED, 0.05},
                     {op_kind::connect, ECONNREFUSED, 0.02}};
    v.push_back({"http-faults", http_faults_scenario, faulty});
    v.push_back({"h2", h2_server_scenario, http});
    sim::options proc;
    proc.time_limit = std::chrono::seconds(60);
    v.push_back({"proc", proc_scenario, proc});
    sim::options files;
    files.faults = {{op_kind::write, 0, 0.3}, {op_kind::write, EIO, 0.005}, {op_kind::fsync, EIO, 0.01}};
    files.disk_space = 256 * 1024;  // about half of what the writers try
    v.push_back({"files", files_scenario, files});
    // On simulated thread_pools: the seed also picks which worker steps when.
    v.push_back({"pool", pool_scenario, {}, 3});
    v.push_back({"http-pool", http_server_scenario, http, 2});
    v.push_back({"h2-pool", h2_server_scenario, http, 2});
    v.push_back({"proc-pool", proc_scenario, proc, 2});
    return v;
  }();
  return list;
}

const scenario* find(std::string_view name) {
  for (const scenario& s : all())
    if (s.name == name)
      return &s;
  return nullptr;
}

}  // namespace saturn::sim_scenarios
