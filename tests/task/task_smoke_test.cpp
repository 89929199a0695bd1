#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

namespace {
saturn::task<int> smoke_answer() { co_return 42; }
saturn::task<int> twice() {
  int a = co_await smoke_answer();
  int b = co_await smoke_answer();
  co_return a + b;
}
saturn::task<int> io_chain() {
  for (int i = 0; i < 10; ++i) {
    auto r = co_await saturn::nop();
    if (!r)
      co_return -1;
  }
  auto s = co_await saturn::sleep_for(std::chrono::milliseconds(1));
  co_return s ? 7 : -2;
}
saturn::task<int> spawner() {
  auto& ctx = co_await saturn::this_task::context();
  std::vector<saturn::join_handle<int>> hs;
  for (int i = 0; i < 100; ++i)
    hs.push_back(saturn::spawn_in(ctx.sched->root_context(), [](int v) -> saturn::task<int> { co_return v; }(i)));
  int sum = 0;
  for (auto& h : hs)
    sum += co_await std::move(h);
  co_return sum;
}
}  // namespace

TEST(task, block_on_returns_value) {
  saturn::runtime rt;
  EXPECT_EQ(rt.block_on(twice()), 84);
  EXPECT_EQ(rt.block_on(io_chain()), 7);
  EXPECT_EQ(rt.block_on(spawner()), 4950);
}

TEST(task, timeout_cancels) {
  saturn::runtime rt;
  auto r = rt.block_on([]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(std::chrono::milliseconds(5), []() -> saturn::task<saturn::result<void>> {
      co_return co_await saturn::sleep_for(std::chrono::seconds(10));
    }());
  }());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.err().code, std::make_error_code(std::errc::timed_out));
}
