// /debug/tasks over HTTP finds a task the test left suspended, with its spawn site and
// state; render_debug_dump has the process line; a signal_dumper writes a dump on its signal.
#include <saturn/http.hpp>
#include <saturn/metrics.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/sync/event.hpp>

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include "metrics/http_get.hpp"

namespace {

saturn::task<int> parked_on(saturn::event& ev) {
  auto r = co_await ev.wait();
  co_return r ? 1 : 0;
}

saturn::task<int> join_one(saturn::join_handle<int> h) {
  const int v = co_await std::move(h);
  co_return v;
}

}  // namespace

TEST(DebugTasks, HttpRouteListsASuspendedTask) {
  saturn::thread_pool pool({.threads = 2});
  saturn::event ev;
  const std::string site = "debug_dump_test.cpp:" + std::to_string(__LINE__ + 1);
  auto h = pool.spawn(parked_on(ev));
  saturn::http::router routes;
  saturn::http::add_debug_routes(routes);
  std::stop_source stop;
  std::atomic<std::uint16_t> port{0};
  saturn::http::serve_options so;
  so.listeners = 1;
  so.stop_on_signals = false;
  so.stop = stop.get_token();
  so.on_listening = [&](const saturn::net::address& a) { port = a.port(); };
  std::thread server([&] { (void)saturn::http::serve(pool, routes, saturn::net::address::loopback_v4(0), so); });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (port.load() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_NE(port.load(), 0);

  const std::string answer = saturn_test::http_get(port, "/debug/tasks");
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_NE(answer.find("text/plain"), std::string::npos) << answer;
  EXPECT_NE(answer.find("saturn task dump: "), std::string::npos) << answer;
  // The parked task's line: its state and its spawn site.
  const std::size_t at = answer.find(site);
  ASSERT_NE(at, std::string::npos) << answer;
  const std::size_t bol = answer.rfind('\n', at);
  const std::string line = answer.substr(bol + 1, answer.find('\n', at) - bol - 1);
  EXPECT_NE(line.find("waiting on a sync primitive"), std::string::npos) << line;
  EXPECT_NE(answer.find("saturn processes: "), std::string::npos) << answer;

  stop.request_stop();
  server.join();
  ev.set();
  EXPECT_EQ(pool.block_on(join_one(std::move(h))), 1);
}

TEST(DebugTasks, SignalDumperDumpsOnItsSignal) {
  // SIGUSR2 so a stray SIGUSR1 elsewhere in the test binary cannot count here.
  saturn::metrics::signal_dumper dumper(SIGUSR2);
  EXPECT_EQ(dumper.dumps(), 0u);
  ::kill(::getpid(), SIGUSR2);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (dumper.dumps() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(dumper.dumps(), 1u);
}
