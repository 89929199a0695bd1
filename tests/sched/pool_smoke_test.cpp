#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "support/wait.hpp"

namespace {
saturn::task<std::uint64_t> value(std::uint64_t i) { co_return i; }

saturn::task<std::uint64_t> spawn_many(std::uint64_t n) {
  auto& ctx = co_await saturn::this_task::context();
  std::vector<saturn::join_handle<std::uint64_t>> hs;
  for (std::uint64_t i = 0; i < n; ++i)
    hs.push_back(saturn::spawn_in(ctx.sched->root_context(), value(i)));
  std::uint64_t sum = 0;
  for (auto& h : hs)
    sum += co_await std::move(h);
  co_return sum;
}

saturn::task<int> io_in_pool() {
  int sum = 0;
  for (int i = 0; i < 100; ++i) {
    auto r = co_await saturn::nop();
    sum += r ? 1 : 0;
    co_await saturn::yield();
  }
  auto s = co_await saturn::sleep_for(std::chrono::milliseconds(2));
  co_return s ? sum : -1;
}
}  // namespace

TEST(thread_pool, block_on_spawn_join) {
  for (auto mode : {saturn::pool_mode::io, saturn::pool_mode::cpu_bound}) {
    saturn::thread_pool pool(saturn::pool_options{.threads = 2, .mode = mode});
    EXPECT_EQ(pool.block_on(spawn_many(100000)), 100000ull * 99999 / 2);
  }
}

TEST(thread_pool, io_and_timers) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 2});
  EXPECT_EQ(pool.block_on(io_in_pool()), 100);
}

TEST(thread_pool, post_from_outside) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 2});
  std::atomic<int> n{0};
  for (int i = 0; i < 100000; ++i)
    pool.post([&n] { n.fetch_add(1, std::memory_order_relaxed); });
  auto sub = pool.register_submitter();
  for (int i = 0; i < 100000; ++i)
    sub.post([&n] { n.fetch_add(1, std::memory_order_relaxed); });
  while (n.load() != 200000)
    std::this_thread::yield();
  EXPECT_EQ(n.load(), 200000);
}

// submit_backlog: external threads that outpace the workers sleep or yield past
// the threshold; every task still runs exactly once, on both external paths, from several
// threads at once, with the smallest threshold (a wait after nearly every submit).
TEST(thread_pool, backlogged_submitters_lose_nothing) {
  for (unsigned threshold : {1u, 0u}) {
    saturn::thread_pool pool(saturn::pool_options{.threads = 2, .mode = saturn::pool_mode::cpu_bound,
                                                  .submit_backlog = threshold});
    constexpr int per_thread = 20000;
    std::vector<std::atomic<std::uint8_t>> ran(4 * per_thread);
    std::vector<std::thread> producers;
    for (int t = 0; t < 4; ++t) {
      producers.emplace_back([&, t] {
        std::optional<saturn::thread_pool::submitter> sub;
        if (t % 2 == 0)
          sub.emplace(pool.register_submitter());  // odd threads use the injection queue
        for (int i = t * per_thread; i < (t + 1) * per_thread; ++i) {
          auto body = [&ran, i] { ran[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed); };
          if (sub)
            sub->post(body);
          else
            pool.post(body);
        }
      });
    }
    for (auto& p : producers)
      p.join();
    ASSERT_TRUE(saturn_test::wait_until([&] {
      for (auto& r : ran)
        if (r.load(std::memory_order_relaxed) == 0)
          return false;
      return true;
    }, std::chrono::seconds(30)));
    for (std::size_t i = 0; i < ran.size(); ++i)
      ASSERT_EQ(ran[i].load(), 1u) << "task " << i << " with threshold " << threshold;
  }
}

TEST(thread_pool, spawn_blocking) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 2});
  int v = pool.block_on([&]() -> saturn::task<int> {
    int a = co_await pool.spawn_blocking([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return 20;
    });
    co_return a + 1;
  }());
  EXPECT_EQ(v, 21);
}

TEST(thread_pool, shutdown_with_suspended_tasks) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    saturn::thread_pool pool(saturn::pool_options{.threads = 2});
    for (int i = 0; i < 100; ++i) {
      pool.spawn([](int fd) -> saturn::task<void> {
        std::array<std::byte, 16> buf;
        (void)co_await saturn::read(fd, buf);
      }(fds[0])).detach();
      pool.spawn([]() -> saturn::task<void> { (void)co_await saturn::sleep_for(std::chrono::seconds(100)); }()).detach();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::close(fds[0]);
  ::close(fds[1]);
}
