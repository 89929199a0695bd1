// The task_wait (a wait whose node lives in the promise, used by event and latch): the
// wait bits are cleared after each wait, so the same task suspends again; an outcome
// stored after a wait (a value, a reference, an exception) reuses the node's 16 bytes
// intact; a task abandoned while it waits with a stop callback armed leaks nothing; and
// an awaiter not awaited at once is caught.
#include "sync_test_support.hpp"

#include <saturn/sync/detail/task_wait.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using sync_test::settle;

static_assert(sizeof(saturn::detail::promise_base) == 56, "promise_base grew: every frame pays for it");

namespace {

// Waits on `ev` three times, with reset() between, counting each return.
saturn::task<int> wait_three_times(saturn::event& ev, int& returned) {
  int ok = 0;
  for (int i = 0; i < 3; ++i) {
    if (co_await ev.wait())
      ++ok;
    ++returned;
    ev.reset();
  }
  co_return ok;
}

struct pair16 {
  std::uint64_t a, b;
};

saturn::task<pair16> wait_then_value(saturn::event& ev) {
  auto r = co_await ev.wait();
  co_return pair16{r ? 0x1111222233334444u : 0, 0x5555666677778888u};
}

saturn::task<int&> wait_then_reference(saturn::event& ev, int& target) {
  (void)co_await ev.wait();
  co_return target;
}

saturn::task<std::string> wait_then_string(saturn::event& ev) {
  (void)co_await ev.wait();
  co_return std::string(100, 'x');
}

saturn::task<int> wait_then_throw(saturn::event& ev) {
  (void)co_await ev.wait();
  throw std::runtime_error("after the wait");
}

}  // namespace

// Each wait really suspends (the bits of the last one were cleared), under a token that
// can stop (so each wait boxes a stop callback) and under one that cannot.
TEST(sync_task_wait, the_same_task_suspends_again_after_each_wait) {
  for (bool stoppable_token : {false, true}) {
    saturn::runtime rt;
    sync_test::stoppable stop(rt);
    saturn::event ev;
    int returned = 0;
    const int ok = rt.block_on([&]() -> saturn::task<int> {
      auto h = stoppable_token ? saturn::spawn_in(stop.ctx, wait_three_times(ev, returned))
                               : rt.spawn(wait_three_times(ev, returned));
      for (int i = 0; i < 3; ++i) {
        co_await settle();
        EXPECT_EQ(returned, i) << "the wait did not suspend";
        ev.set();
        co_await settle();
        EXPECT_EQ(returned, i + 1);
      }
      co_return co_await std::move(h);
    }());
    EXPECT_EQ(ok, 3);
  }
}

// A stopped wait is followed by a wait that suspends and is woken normally: the canceled
// outcome does not stick. The first task's token is stopped; the second, fresh one is not.
TEST(sync_task_wait, a_canceled_wait_leaves_no_state_behind) {
  saturn::runtime rt;
  saturn::event ev;
  std::optional<saturn::result<void>> first, second;
  rt.block_on([&]() -> saturn::task<> {
    sync_test::stoppable stop(rt);
    auto h = saturn::spawn_in(stop.ctx, [](saturn::event& e, std::optional<saturn::result<void>>& a,
                                           std::optional<saturn::result<void>>& b, std::stop_source& s) -> saturn::task<> {
      a.emplace(co_await e.wait());  // canceled while suspended
      (void)s;
      b.emplace(co_await e.wait());  // the token is stopped: canceled at once, without suspending
    }(ev, first, second, stop.source));
    co_await settle();
    EXPECT_FALSE(first.has_value());
    stop.source.request_stop();
    co_await std::move(h);
  }());
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(sync_test::failed_with(*first, std::errc::operation_canceled));
  EXPECT_TRUE(sync_test::failed_with(*second, std::errc::operation_canceled));
  int returned = 0;
  const int ok = rt.block_on([&]() -> saturn::task<int> {
    auto h = rt.spawn(wait_three_times(ev, returned));
    for (int i = 0; i < 3; ++i) {
      co_await settle();
      ev.set();
    }
    co_return co_await std::move(h);
  }());
  EXPECT_EQ(ok, 3);
}

// The outcome is written into the bytes the wait node used: each kind comes back intact.
TEST(sync_task_wait, an_outcome_after_a_wait_comes_back_intact) {
  saturn::runtime rt;
  saturn::event ev;
  int target = 7;
  rt.block_on([&]() -> saturn::task<> {
    auto v = rt.spawn(wait_then_value(ev));
    auto r = rt.spawn(wait_then_reference(ev, target));
    auto s = rt.spawn(wait_then_string(ev));
    auto e = rt.spawn(wait_then_throw(ev));
    co_await settle();
    ev.set();
    const pair16 p = co_await std::move(v);
    EXPECT_EQ(p.a, 0x1111222233334444u);
    EXPECT_EQ(p.b, 0x5555666677778888u);
    int& ref = co_await std::move(r);
    EXPECT_EQ(&ref, &target);
    EXPECT_EQ(co_await std::move(s), std::string(100, 'x'));
    bool threw = false;
    try {
      (void)co_await std::move(e);
    } catch (const std::runtime_error& x) {
      threw = std::string(x.what()) == "after the wait";
    }
    EXPECT_TRUE(threw);
  }());
}

// A runtime destroyed while tasks wait with a stop callback armed: each is unlinked from
// the event that outlives it and its box freed (ASan: no leak), and a join reports the
// abandonment (its exception went into the bytes the wait node had used).
TEST(sync_task_wait, abandoned_while_waiting_with_a_stop_callback) {
  saturn::event outlives;
  std::stop_source source;
  saturn::join_handle<pair16> kept;
  {
    saturn::runtime rt;
    saturn::task_context ctx = rt.root_context();
    ctx.token = source.get_token();
    rt.block_on([&]() -> saturn::task<> {
      for (int i = 0; i < 3; ++i)
        (void)saturn::spawn_in(ctx, wait_then_value(outlives));  // detached
      kept = saturn::spawn_in(ctx, wait_then_value(outlives));
      co_await settle();
    }());
    EXPECT_FALSE(kept.is_finished());
  }
  EXPECT_TRUE(kept.is_finished());  // abandoned: finished with task_abandoned
  outlives.set();  // must not touch the destroyed frames
  source.request_stop();  // nor run their stop callbacks
  kept.detach();  // finished: frees the frame
}

void await_a_kept_awaiter() {
  saturn::runtime rt;
  saturn::event a(true);
  saturn::event b(true);
  rt.block_on([&]() -> saturn::task<> {
    auto first = a.wait();
    auto second = b.wait();
    (void)co_await first;  // `first` was handed its event before `second` took over
    (void)co_await second;
  }());
}

TEST(sync_task_wait_death, an_awaiter_kept_past_another_wait_aborts) {
  EXPECT_DEATH(await_a_kept_awaiter(), "not awaited at once");
}
