// The task dump of single-threaded runtimes: a runtime inside block_on is paused through
// its loop and its spawned tasks are listed with their state; its own thread dumps it
// without a pause; a runtime outside block_on does not pause and is reported so, and its
// late pause point does not hold it afterwards.
#include <saturn/sched/task_dump.hpp>
#include <saturn/sync.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/this_task.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

saturn::task<int> waits_on(saturn::event& ev, int v) {
  const saturn::wait_result r = co_await ev.wait();
  (void)r;
  co_return v;
}

std::vector<saturn::task_entry> of_runtime(const saturn::task_dump& d, unsigned id) {
  std::vector<saturn::task_entry> out;
  for (const auto& e : d.tasks)
    if (e.runtime == id)
      out.push_back(e);
  return out;
}

}  // namespace

TEST(RuntimeDump, ARuntimeInsideBlockOnIsPausedAndListed) {
  saturn::runtime rt;
  const unsigned id = rt.stats_id();
  saturn::event gate, done;
  saturn::task_dump d;
  std::thread dumper;
  const int sum = rt.block_on([](saturn::runtime& on, saturn::event& g, saturn::event& fin, saturn::task_dump& out,
                                 std::thread& th) -> saturn::task<int> {
    std::vector<saturn::join_handle<int>> hs;
    for (int i = 1; i <= 3; ++i)
      hs.push_back(on.spawn(waits_on(g, i)));
    co_await saturn::yield();  // the three start and wait on the gate
    th = std::thread([&out, &fin] {
      out = saturn::dump_tasks();
      fin.set();
    });
    const saturn::wait_result r = co_await fin.wait();  // block_on runs the loop while the other thread dumps
    (void)r;
    g.set();
    int total = 0;
    for (auto& h : hs)
      total += co_await std::move(h);
    co_return total;
  }(rt, gate, done, d, dumper));
  dumper.join();
  EXPECT_EQ(sum, 6);
  EXPECT_GE(d.runtimes, 1u);
  EXPECT_EQ(d.unpaused_runtimes, 0u);
  EXPECT_GE(d.pauses, 1u);
  const auto mine = of_runtime(d, id);
  ASSERT_EQ(mine.size(), 3u) << saturn::render_task_dump(d);
  for (const auto& e : mine) {
    EXPECT_EQ(e.state, saturn::task_state::waiting_sync);
    EXPECT_NE(e.resume, nullptr);
  }
  const std::string text = saturn::render_task_dump(d);
  EXPECT_NE(text.find("runtime " + std::to_string(id) + " waiting on a sync primitive"), std::string::npos) << text;
  EXPECT_NE(text.find(" runtimes ("), std::string::npos) << text;
}

TEST(RuntimeDump, ItsOwnThreadDumpsItWithoutAPause) {
  saturn::runtime rt;
  const unsigned id = rt.stats_id();
  saturn::event gate;
  const saturn::task_dump d = rt.block_on([](saturn::runtime& on, saturn::event& g) -> saturn::task<saturn::task_dump> {
    auto a = on.spawn(waits_on(g, 1));
    auto b = on.spawn(waits_on(g, 2));
    co_await saturn::yield();
    saturn::task_dump got = saturn::dump_tasks();
    g.set();
    const int x = co_await std::move(a);
    const int y = co_await std::move(b);
    EXPECT_EQ(x + y, 3);
    co_return got;
  }(rt, gate));
  const auto mine = of_runtime(d, id);
  ASSERT_EQ(mine.size(), 2u) << saturn::render_task_dump(d);
  for (const auto& e : mine)
    EXPECT_EQ(e.state, saturn::task_state::waiting_sync);
  EXPECT_EQ(d.unpaused_runtimes, 0u);
}

TEST(RuntimeDump, ARuntimeOutsideBlockOnIsReportedUnpaused) {
  saturn::runtime rt;
  const unsigned id = rt.stats_id();
  saturn::task_dump d;
  std::thread([&d] {
    saturn::task_dump_options o;
    o.pause_timeout = std::chrono::milliseconds(20);
    d = saturn::dump_tasks(o);
  }).join();
  EXPECT_EQ(d.unpaused_runtimes, 1u);
  EXPECT_TRUE(of_runtime(d, id).empty());
  EXPECT_NE(saturn::render_task_dump(d).find("did not pause in time"), std::string::npos);
  // The pause point left in its loop runs at the next block_on and does not hold it.
  const int v = rt.block_on([]() -> saturn::task<int> { co_return 7; }());
  EXPECT_EQ(v, 7);
}
