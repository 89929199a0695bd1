// Tier A's callable storage: move-only and large callables, callables destroyed right
// after their single call, the pool's reuse, and callables with extended alignment.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;

TEST(callback, move_only_callable) {
  event_loop loop;
  auto value = std::make_unique<int>(41);
  int got = 0;
  loop.nop([v = std::move(value), &got](int) { got = *v + 1; });
  loop.run();
  EXPECT_EQ(got, 42);
}

TEST(callback, callable_is_destroyed_after_its_call) {
  event_loop loop;
  auto token = std::make_shared<int>(0);
  loop.nop([token](int) {});
  loop.defer([token] {});
  loop.after(0ns, [token] {});
  loop.timeout(0ns, [token](int) {});
  EXPECT_EQ(token.use_count(), 5);
  loop.run();
  EXPECT_EQ(token.use_count(), 1);
}

TEST(callback, large_callable_falls_back_to_the_heap) {
  event_loop loop;
  std::string big(1000, 'x');
  struct large {
    char bytes[600];
    std::string* out;
    void operator()(int r) const { *out = std::string(bytes, 3) + std::to_string(r); }
  } fn{};
  fn.bytes[0] = 'a';
  fn.bytes[1] = 'b';
  fn.bytes[2] = 'c';
  fn.out = &big;
  loop.nop(fn);
  struct large_defer {
    char bytes[600];
    int* n;
    void operator()() const { *n += bytes[599]; }
  } d{};
  int n = 0;
  d.bytes[599] = 5;
  d.n = &n;
  loop.defer(d);
  loop.run();
  EXPECT_EQ(big, "abc0");
  EXPECT_EQ(n, 5);
}

TEST(callback, storage_is_recycled) {
  event_loop loop;
  std::vector<const saturn::operation*> first;
  for (int i = 0; i < 10; ++i)
    first.push_back(loop.nop([](int) {}).op);
  loop.run();
  int reused = 0;
  for (int i = 0; i < 10; ++i) {
    const auto* op = loop.nop([](int) {}).op;
    reused += std::find(first.begin(), first.end(), op) != first.end();
  }
  loop.run();
  EXPECT_EQ(reused, 10) << "completed operations' storage goes back to the loop's pool";
}

TEST(callback, callable_may_submit_and_destroy_nothing_else) {
  event_loop loop;
  int depth = 0;
  struct chain {
    event_loop* loop;
    int* depth;
    void operator()(int) const {
      if (++*depth < 1000)
        loop->nop(*this);
    }
  };
  loop.nop(chain{&loop, &depth});
  loop.run();
  EXPECT_EQ(depth, 1000);
}

/// A callable whose alignment is stricter than the pool's 64 bytes: it checks where it
/// was placed. Constructing it at a misaligned address is undefined behaviour (UBSan
/// reports it as "constructor call on misaligned address").
struct alignas(256) over_aligned {
  int* misplaced;
  int* calls;
  void check() const {
    ++*calls;
    if (reinterpret_cast<std::uintptr_t>(this) % 256 != 0)
      ++*misplaced;
  }
};

struct op_fn : over_aligned {
  void operator()(int) const { check(); }
};
struct void_fn : over_aligned {
  void operator()() const { check(); }
};

/// Runs in a child process: under UBSan a misaligned placement aborts at once.
[[noreturn]] void place_over_aligned_callables() {
  int misplaced = 0;
  int calls = 0;
  {
    event_loop loop;
    for (int i = 0; i < 16; ++i) {
      loop.nop(op_fn{{&misplaced, &calls}});
      loop.defer(void_fn{{&misplaced, &calls}});
      loop.after(0ns, void_fn{{&misplaced, &calls}});
    }
    loop.run();
  }
  std::fprintf(stderr, "calls=%d misplaced=%d\n", calls, misplaced);
  std::_Exit(calls == 48 && misplaced == 0 ? 0 : 1);
}

TEST(callback, over_aligned_callables_are_placed_aligned) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(place_over_aligned_callables(), ::testing::ExitedWithCode(0), "calls=48 misplaced=0")
      << "callables with alignof > 64 must be placed at aligned addresses (the pool hands out 64-aligned slots)";
}

TEST(callback, over_aligned_remote_callables_are_placed_aligned) {
  event_loop loop;
  int misplaced = 0;
  int calls = 0;
  for (int i = 0; i < 16; ++i)
    loop.defer_remote(void_fn{{&misplaced, &calls}});
  loop.run();
  EXPECT_EQ(calls, 16);
  EXPECT_EQ(misplaced, 0);
}

}  // namespace
