// saturn::oneshot: value before and after the receiver waits, a dropped sender or
// receiver, sends from plain threads, misuse, and cancellation of receive.
#include "sync_test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

using namespace std::chrono_literals;
using sync_test::failed_with;
using sync_test::settle;

namespace {

using int_oneshot = saturn::oneshot<std::unique_ptr<int>>;
// (The tests name the ends `auto& tx = ends.first`: clang 14 cannot capture structured
// bindings in lambdas.)

saturn::task<> receive_into(int_oneshot::receiver& rx, std::optional<saturn::result<std::unique_ptr<int>>>& out) {
  out.emplace(co_await rx.receive());
}

}  // namespace

TEST(sync_oneshot, send_before_receive) {
  saturn::runtime rt;
  auto ends = int_oneshot::make();
  auto& tx = ends.first;
  auto& rx = ends.second;
  EXPECT_TRUE(failed_with(rx.try_receive(), std::errc::resource_unavailable_try_again));
  EXPECT_TRUE(tx.send(std::make_unique<int>(42)).has_value());
  EXPECT_FALSE(tx);
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<std::unique_ptr<int>>> { co_return co_await rx.receive(); }());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(**r, 42);
  EXPECT_TRUE(failed_with(rx.try_receive(), std::errc::broken_pipe));  // taken already
}

TEST(sync_oneshot, send_wakes_a_waiting_receiver) {
  saturn::runtime rt;
  auto ends = int_oneshot::make();
  auto& tx = ends.first;
  auto& rx = ends.second;
  std::optional<saturn::result<std::unique_ptr<int>>> got;
  rt.block_on([&]() -> saturn::task<> {
    auto h = rt.spawn(receive_into(rx, got));
    co_await settle();
    EXPECT_FALSE(got.has_value());
    EXPECT_TRUE(tx.send(std::make_unique<int>(7)).has_value());
    co_await std::move(h);
  }());
  EXPECT_EQ(***got, 7);
}

TEST(sync_oneshot, dropped_sender_fails_the_receiver) {
  saturn::runtime rt;
  // dropped while the receiver waits
  {
    auto ends = int_oneshot::make();
    auto& tx = ends.first;
    auto& rx = ends.second;
    std::optional<saturn::result<std::unique_ptr<int>>> got;
    rt.block_on([&]() -> saturn::task<> {
      auto h = rt.spawn(receive_into(rx, got));
      co_await settle();
      { auto gone = std::move(tx); }
      co_await std::move(h);
    }());
    EXPECT_TRUE(failed_with(*got, std::errc::broken_pipe));
    EXPECT_NE(got->err().message().find("sender was dropped"), std::string::npos) << got->err().message();
  }
  // dropped before the receiver waits
  {
    auto ends = int_oneshot::make();
    auto& tx = ends.first;
    auto& rx = ends.second;
    { auto gone = std::move(tx); }
    std::optional<saturn::result<std::unique_ptr<int>>> got;
    rt.block_on(receive_into(rx, got));
    EXPECT_TRUE(failed_with(*got, std::errc::broken_pipe));
  }
}

TEST(sync_oneshot, dropped_receiver_fails_the_send_and_keeps_the_value) {
  auto ends = int_oneshot::make();
  auto& tx = ends.first;
  auto& rx = ends.second;
  EXPECT_FALSE(tx.is_closed());
  { auto gone = std::move(rx); }
  EXPECT_TRUE(tx.is_closed());
  auto v = std::make_unique<int>(3);
  EXPECT_TRUE(failed_with(tx.send(std::move(v)), std::errc::broken_pipe));
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 3);
}

TEST(sync_oneshot, misuse_throws) {
  auto ends = saturn::oneshot<int>::make();
  auto& tx = ends.first;
  auto& rx = ends.second;
  EXPECT_TRUE(tx.send(1).has_value());
  EXPECT_THROW((void)tx.send(2), std::logic_error);
  saturn::oneshot<int>::receiver empty;
  EXPECT_THROW((void)empty.try_receive(), std::logic_error);
  EXPECT_EQ(*rx.try_receive(), 1);
}

TEST(sync_oneshot, send_or_drop_from_a_plain_thread) {
  saturn::runtime rt;
  for (int round = 0; round < sync_test::race_rounds; ++round) {
    auto ends = int_oneshot::make();
    auto& tx = ends.first;
    auto& rx = ends.second;
    std::optional<std::thread> t;
    const bool send = round % 3 != 0;
    auto r = rt.block_on([&]() -> saturn::task<saturn::result<std::unique_ptr<int>>> {
      t.emplace([&, sender = std::move(tx)]() mutable {
        if (send)
          (void)sender.send(std::make_unique<int>(round));
      });  // the sender dies with the thread's lambda when it did not send
      co_return co_await rx.receive();
    }());
    t->join();
    if (send) {
      ASSERT_TRUE(r.has_value());
      ASSERT_EQ(**r, round);
    } else {
      ASSERT_TRUE(failed_with(r, std::errc::broken_pipe));
    }
  }
}

TEST(sync_oneshot, with_timeout_cancels_receive_and_the_value_stays) {
  saturn::runtime rt;
  auto ends = int_oneshot::make();
  auto& tx = ends.first;
  auto& rx = ends.second;
  std::optional<saturn::result<std::unique_ptr<int>>> got;
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(2ms, receive_into(rx, got));
  }());
  EXPECT_TRUE(failed_with(r, std::errc::timed_out));
  EXPECT_TRUE(failed_with(*got, std::errc::operation_canceled));
  EXPECT_TRUE(tx.send(std::make_unique<int>(9)).has_value());
  EXPECT_EQ(**rx.try_receive(), 9);
}

TEST(sync_oneshot, cancel_races_send_on_plain_threads) {
  saturn::runtime rt;
  int ok = 0, canceled = 0;
  for (int round = 0; round < sync_test::race_rounds; ++round) {
    auto ends = int_oneshot::make();
    auto& tx = ends.first;
    auto& rx = ends.second;
    std::optional<saturn::result<std::unique_ptr<int>>> got;
    sync_test::race_cancel_once(
        rt, [&] { return receive_into(rx, got); }, [&] { (void)tx.send(std::make_unique<int>(round)); }, round);
    ASSERT_TRUE(got.has_value());
    if (got->has_value()) {
      ++ok;
      ASSERT_EQ(**got.value(), round);
    } else {
      ++canceled;
      ASSERT_TRUE(failed_with(*got, std::errc::operation_canceled));
      ASSERT_EQ(**rx.try_receive(), round);  // not lost
    }
  }
  std::printf("[ info     ] oneshot race: %d received, %d cancelled\n", ok, canceled);
}
