// The runtime collector and user metrics on a live thread_pool: increments from every
// worker summed exactly, the worker and ring families present per worker and monotonic
// across renders, the whole text well-formed (our parser and promtool).
#include <saturn/metrics.hpp>
#include <saturn/proc.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/sync.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <sys/wait.h>
#include <filesystem>
#include <fstream>
#include <thread>
#include <string>
#include <vector>

#include "metrics/exposition.hpp"

namespace m = saturn::metrics;

namespace {

saturn::task<void> add_many(m::counter& c, m::histogram& h, int n) {
  for (int i = 0; i < n; ++i) {
    c.inc();
    if (i % 100 == 0) {
      h.observe(double(i % 7));
      co_await saturn::yield();
    }
  }
}

saturn::task<void> fan_out(saturn::thread_pool& pool, m::counter& c, m::histogram& h, int tasks, int per) {
  std::vector<saturn::join_handle<void>> hs;
  for (int t = 0; t < tasks; ++t)
    hs.push_back(pool.spawn(add_many(c, h, per)));
  for (auto& x : hs)
    co_await std::move(x);
}

std::string pool_label(const saturn::thread_pool&, const saturn_test::exposition& e) {
  // The newest pool is this test's: the highest pool id with samples.
  int best = -1;
  for (auto& s : e.find("saturn_worker_tasks_run_total"))
    best = std::max(best, std::atoi(s.label("pool").c_str()));
  return std::to_string(best);
}

}  // namespace

TEST(MetricsRuntime, WorkersIncrementsAreSummedExactly) {
  saturn::thread_pool pool({.threads = 4});
  m::counter& c = m::registry::global().counter("test_runtime_adds_total", "Adds made by the test's tasks");
  m::histogram& h = m::registry::global().histogram("test_runtime_values", "Values", {1, 2, 4});
  const std::uint64_t before = c.value();
  const std::uint64_t before_obs = h.snapshot().count;
  constexpr int tasks = 64, per = 10000;
  pool.block_on(fan_out(pool, c, h, tasks, per));
  EXPECT_EQ(c.value() - before, std::uint64_t(tasks) * per);
  EXPECT_EQ(h.snapshot().count - before_obs, std::uint64_t(tasks) * (per / 100));
}

TEST(MetricsRuntime, RenderHasEveryWorkerAndIsMonotonic) {
  saturn::thread_pool pool({.threads = 3});
  m::counter& c = m::registry::global().counter("test_runtime_adds_total", "Adds made by the test's tasks");
  m::histogram& h = m::registry::global().histogram("test_runtime_values", "Values", {1, 2, 4});
  pool.block_on(fan_out(pool, c, h, 8, 1000));
  const auto first = saturn_test::parse_exposition(m::render());
  const std::string pool_id = pool_label(pool, first);
  for (const char* name : {"saturn_worker_tasks_run_total", "saturn_worker_steal_attempts_total",
                           "saturn_worker_parks_total", "saturn_ring_enters_total", "saturn_ring_sqes_submitted_total",
                           "saturn_ring_cqes_total", "saturn_timers_armed_total", "saturn_worker_busy_seconds_total",
                           "saturn_worker_local_queue_depth"}) {
    EXPECT_EQ(first.find(name, {{"pool", pool_id}}).size(), 3u) << name;
    EXPECT_TRUE(first.types.count(name)) << name;
  }
  EXPECT_EQ(first.sum("saturn_pool_workers", {{"pool", pool_id}}), 3);
  EXPECT_GT(first.sum("saturn_task_frame_mapped_bytes"), -1);
  const double ran = first.sum("saturn_worker_tasks_run_total", {{"pool", pool_id}});
  EXPECT_GE(ran, 8) << "the 8 tasks (and their steps) ran on the pool";
  // More work, including timers, then every counter is at least where it was.
  pool.block_on([]() -> saturn::task<void> {
    for (int i = 0; i < 5; ++i) {
      auto s = saturn::sleep_for(std::chrono::milliseconds(1));
      (void)co_await s;
    }
  }());
  pool.block_on(fan_out(pool, c, h, 8, 1000));
  const auto second = saturn_test::parse_exposition(m::render());
  int compared = 0;
  for (auto& s : first.samples) {
    const std::string& type = first.types.count(s.name) ? first.types.at(s.name) : std::string();
    if (type != "counter" || s.label("pool") != pool_id)
      continue;
    auto again = second.find(s.name, s.labels);
    ASSERT_EQ(again.size(), 1u) << s.name;
    EXPECT_GE(again[0].value, s.value) << s.name << " went down";
    ++compared;
  }
  EXPECT_GT(compared, 30);
  EXPECT_GT(second.sum("saturn_worker_tasks_run_total", {{"pool", pool_id}}), ran);
  EXPECT_GE(second.sum("saturn_timers_fired_total", {{"pool", pool_id}}),
            first.sum("saturn_timers_fired_total", {{"pool", pool_id}}) + 5);
  EXPECT_GE(saturn_test::check_histograms(second), 1);
}

TEST(MetricsRuntime, APoolLeavesTheRenderWhenDestroyed) {
  std::string id;
  {
    saturn::thread_pool pool({.threads = 2});
    auto e = saturn_test::parse_exposition(m::render());
    id = pool_label(pool, e);
    EXPECT_EQ(e.find("saturn_worker_tasks_run_total", {{"pool", id}}).size(), 2u);
  }
  auto e = saturn_test::parse_exposition(m::render());
  EXPECT_TRUE(e.find("saturn_worker_tasks_run_total", {{"pool", id}}).empty());
}

TEST(MetricsRuntime, PromtoolAcceptsTheRender) {
  if (!std::filesystem::exists("/usr/bin/promtool"))
    GTEST_SKIP() << "promtool is missing (Debian package prometheus; scripts/deps test installs it)";
  saturn::thread_pool pool({.threads = 2});
  auto& reg = m::registry::global();
  reg.counter("test_promtool_escapes_total", "A label value with \\ and \" and a\nnewline",
              {{"v", "back\\slash \"quoted\"\nnext line"}})
      .inc();
  reg.histogram("test_promtool_seconds", "Seconds", {0.001, 0.1, 10}).observe(0.05);
  const std::string text = m::render();
  const auto path = std::filesystem::temp_directory_path() / ("saturn_metrics_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path) << text;
  const std::string cmd = "/usr/bin/promtool check metrics < " + path.string() + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string said;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr)
    said += buf;
  const int status = ::pclose(p);
  std::filesystem::remove(path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "promtool said:\n" << said << "\n--- text:\n" << text;
}

namespace {
saturn::process<int> waits_for_one() {
  (void)co_await saturn::receive();
}

double render_value(const char* name) {
  return saturn_test::parse_exposition(m::render()).sum(name);
}

/// Waits up to 5 s for pred().
template <class F>
bool eventually(F pred) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > give_up)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}
}  // namespace

TEST(MetricsRuntime, ProcessesAliveFollowsSpawnsAndExits) {
  saturn::thread_pool pool({.threads = 2});
  const double before = render_value("saturn_processes_alive");
  std::vector<saturn::pid_of<int>> ps;
  for (int i = 0; i < 50; ++i)
    ps.push_back(saturn::spawn_process(pool, waits_for_one));
  EXPECT_GE(render_value("saturn_processes_alive"), before + 50);
  EXPECT_GE(render_value("saturn_process_slots"), 50);
  for (auto& p : ps)
    saturn::send(p, 1);
  EXPECT_TRUE(eventually([&] { return render_value("saturn_processes_alive") <= before; }))
      << "still alive: " << render_value("saturn_processes_alive") << ", before: " << before;
}

namespace {
saturn::task<void> waits_on(saturn::event& ev) {
  const saturn::wait_result r = co_await ev.wait();
  (void)r;
}
}  // namespace

TEST(MetricsRuntime, ASingleThreadedRuntimeIsRenderedWhileAlive) {
  std::string id;
  {
    saturn::runtime rt;
    id = std::to_string(rt.stats_id());
    saturn::event ev;
    const auto e = rt.block_on([](saturn::runtime& on, saturn::event& gate) -> saturn::task<saturn_test::exposition> {
      for (int i = 0; i < 3; ++i) {
        auto s = saturn::sleep_for(std::chrono::milliseconds(1));
        (void)co_await s;
      }
      auto h = on.spawn(waits_on(gate));
      co_await saturn::yield();  // h starts and waits: one live task
      auto text = saturn_test::parse_exposition(m::render());
      gate.set();
      co_await std::move(h);
      co_return text;
    }(rt, ev));
    EXPECT_EQ(e.sum("saturn_runtime_live_tasks", {{"runtime", id}}), 1);
    EXPECT_EQ(e.find("saturn_runtime_live_tasks", {{"runtime", id}}).size(), 1u);
    EXPECT_GE(e.sum("saturn_timers_armed_total", {{"runtime", id}}), 3);
    EXPECT_GE(e.sum("saturn_timers_fired_total", {{"runtime", id}}), 3);
    EXPECT_GE(e.sum("saturn_ring_enters_total", {{"runtime", id}}), 3);
    EXPECT_EQ(e.find("saturn_ring_cqes_total", {{"runtime", id}}).size(), 1u);
    EXPECT_EQ(e.types.at("saturn_runtime_live_tasks"), "gauge");
    const auto after = saturn_test::parse_exposition(m::render());
    EXPECT_EQ(after.sum("saturn_runtime_live_tasks", {{"runtime", id}}), 0);
  }
  const auto gone = saturn_test::parse_exposition(m::render());
  EXPECT_TRUE(gone.find("saturn_ring_enters_total", {{"runtime", id}}).empty());
  EXPECT_TRUE(gone.find("saturn_runtime_live_tasks", {{"runtime", id}}).empty());
}

TEST(MetricsRuntime, FrameBytesInUseAndMailboxHighWaterMarkAreRendered) {
  saturn::thread_pool pool({.threads = 2});
  std::vector<saturn::pid_of<int>> ps;
  for (int i = 0; i < 100; ++i)
    ps.push_back(saturn::spawn_process(pool, waits_for_one));
  const auto e = saturn_test::parse_exposition(m::render());
  for (const char* name : {"saturn_task_frame_in_use_bytes", "saturn_task_frame_large_bytes",
                           "saturn_process_mailbox_depth_max"}) {
    EXPECT_EQ(e.find(name).size(), 1u) << name;
    EXPECT_EQ(e.types.at(name), "gauge") << name;
  }
#if !defined(SATURN_ASAN) && !defined(SATURN_TSAN)
  // 100 suspended processes hold 100 frames (sanitizer builds do not count frames).
  EXPECT_GE(e.sum("saturn_task_frame_in_use_bytes"), 100 * 64);
#endif
  EXPECT_LE(e.sum("saturn_task_frame_in_use_bytes"), e.sum("saturn_task_frame_mapped_bytes"));
  for (auto& p : ps)
    saturn::send(p, 1);
  EXPECT_TRUE(eventually([&] { return render_value("saturn_process_mailbox_depth_max") >= 1; }));
}
