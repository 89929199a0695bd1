// dump_tasks: a known suspended task is found with its spawn site, its state (waiting on a
// sync primitive, joining another task) and its worker; a dump pauses the workers only
// briefly and leaves them running after it.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include <saturn/sched/task_dump.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace {

saturn::task<int> wait_for(saturn::event& ev) {
  auto r = co_await ev.wait();
  co_return r ? 7 : -1;
}

saturn::task<int> join_it(saturn::join_handle<int> h) {
  const int v = co_await std::move(h);
  co_return v + 1;
}

const saturn::task_entry* find_line(const saturn::task_dump& d, unsigned line) {
  for (const auto& e : d.tasks)
    if (e.has_site && e.site.line() == line && std::string(e.site.file_name()).find("task_dump_test") != std::string::npos)
      return &e;
  return nullptr;
}

void wait_until_recorded(unsigned line) {
  // The task is recorded on its first run: poll the dump until it shows up (bounded).
  for (int i = 0; i < 2000; ++i) {
    if (find_line(saturn::dump_tasks(), line) != nullptr)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(task_dump, finds_a_suspended_task_and_its_joiner) {
  for (auto mode : {saturn::pool_mode::cpu_bound, saturn::pool_mode::io}) {
    saturn::thread_pool pool(saturn::pool_options{.threads = 2, .mode = mode});
    saturn::event ev;
    const unsigned waiter_line = __LINE__ + 1;
    auto waiter = pool.spawn(wait_for(ev));
    wait_until_recorded(waiter_line);
    const unsigned joiner_line = __LINE__ + 1;
    auto joiner = pool.spawn(join_it(std::move(waiter)));
    wait_until_recorded(joiner_line);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // both suspended, and aged

    const saturn::task_dump d = saturn::dump_tasks();
    const saturn::task_entry* w = find_line(d, waiter_line);
    const saturn::task_entry* j = find_line(d, joiner_line);
    ASSERT_NE(w, nullptr) << saturn::render_task_dump(d);
    ASSERT_NE(j, nullptr) << saturn::render_task_dump(d);
    EXPECT_EQ(w->state, saturn::task_state::waiting_sync) << saturn::render_task_dump(d);
    EXPECT_EQ(j->state, saturn::task_state::joining) << saturn::render_task_dump(d);
    EXPECT_EQ(j->awaits, w->task);
    EXPECT_LT(w->worker, 2u);
    EXPECT_NE(w->resume, nullptr);
    EXPECT_GE(w->age_ns, 10'000'000u);  // coarse clock: at least half the 20 ms
    EXPECT_LT(w->age_ns, 60'000'000'000u);
    EXPECT_EQ(d.unpaused_pools, 0u);
    EXPECT_GE(d.pauses, 1u);
    EXPECT_NE(std::string(w->site.function_name()).find("finds_a_suspended_task"), std::string::npos);

    const std::string text = saturn::render_task_dump(d);
    EXPECT_NE(text.find("waiting on a sync primitive spawned at"), std::string::npos) << text;
    EXPECT_NE(text.find("joining"), std::string::npos) << text;

    ev.set();
    EXPECT_EQ(pool.block_on(join_it(std::move(joiner))), 9);
    // Ended tasks leave the dump.
    const saturn::task_dump after = saturn::dump_tasks();
    EXPECT_EQ(find_line(after, waiter_line), nullptr);
    EXPECT_EQ(find_line(after, joiner_line), nullptr);
  }
}

TEST(task_dump, many_tasks_in_batches_with_workers_running) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 2, .mode = saturn::pool_mode::cpu_bound});
  saturn::event ev;
  constexpr int n = 20'000;
  std::vector<saturn::join_handle<int>> hs;
  hs.reserve(n);
  for (int i = 0; i < n; ++i)
    hs.push_back(pool.spawn(wait_for(ev)));
  // Let them all start (each is recorded on its first run).
  std::size_t seen = 0;
  for (int i = 0; i < 5000 && seen < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seen = saturn::dump_tasks({.max_tasks = n + 10}).tasks.size();
  }
  saturn::task_dump d = saturn::dump_tasks({.max_tasks = n + 10, .batch = 1000});
  EXPECT_EQ(d.tasks.size(), std::size_t(n));
  EXPECT_GE(d.pauses, std::size_t(n / 1000));
  EXPECT_FALSE(d.truncated);
  EXPECT_EQ(std::count_if(d.tasks.begin(), d.tasks.end(),
                          [](const saturn::task_entry& e) { return e.state == saturn::task_state::waiting_sync; }),
            n);
  saturn::task_dump t = saturn::dump_tasks({.max_tasks = 100});
  EXPECT_EQ(t.tasks.size(), 100u);
  EXPECT_TRUE(t.truncated);
  ev.set();
  auto sum = [&]() -> saturn::task<long> {
    long s = 0;
    for (auto& h : hs)
      s += co_await std::move(h);
    co_return s;
  };
  EXPECT_EQ(pool.block_on(sum()), 7L * n);
}

}  // namespace
