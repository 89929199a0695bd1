#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <atomic>

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
