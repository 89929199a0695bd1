// saturn::wait_result: the one-byte outcome of a sync wait reads and converts like
// result<void>, and names the operation in its error.
#include <saturn/sync.hpp>
#include <saturn/task/runtime.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <stop_token>
#include <system_error>
#include <type_traits>

namespace {

using saturn::wait_op;
using saturn::wait_result;

TEST(sync_wait_result, success_is_empty_and_converts_to_an_ok_result) {
  const wait_result ok;
  EXPECT_TRUE(ok);
  EXPECT_TRUE(ok.has_value());
  EXPECT_NO_THROW(ok.value());
  EXPECT_FALSE(ok.code());
  EXPECT_STREQ(ok.err().operation, "");
  const saturn::result<void> r = ok;
  EXPECT_TRUE(r.has_value());
  EXPECT_EQ(sizeof(wait_result), 1u);
}

TEST(sync_wait_result, each_operation_names_itself_when_canceled) {
  const std::pair<wait_op, const char*> ops[] = {
      {wait_op::event_wait, "event::wait"},
      {wait_op::latch_wait, "latch::wait"},
      {wait_op::wait_group_wait, "wait_group::wait"},
      {wait_op::semaphore_acquire, "semaphore::acquire"},
      {wait_op::channel_send, "channel::send"},
  };
  for (const auto& [op, name] : ops) {
    const wait_result c = wait_result::canceled(op);
    EXPECT_FALSE(c);
    EXPECT_TRUE(c.err() == std::errc::operation_canceled) << name;
    EXPECT_STREQ(c.err().operation, name);
    EXPECT_EQ(c.err().message(), std::string(name) + ": " + c.code().message());
    const saturn::result<void> r = c;
    ASSERT_FALSE(r.has_value());
    EXPECT_STREQ(r.err().operation, name);
    EXPECT_EQ(r.code(), c.code());
    try {
      c.value();
      ADD_FAILURE() << name << ": value() of an error did not throw";
    } catch (const std::system_error& e) {
      EXPECT_EQ(e.code(), std::make_error_code(std::errc::operation_canceled));
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

TEST(sync_wait_result, a_closed_channel_send_is_broken_pipe) {
  const wait_result c = wait_result::closed(wait_op::channel_send);
  EXPECT_FALSE(c);
  EXPECT_TRUE(c.err() == std::errc::broken_pipe);
  EXPECT_STREQ(c.err().operation, "channel::send: channel closed");
}

// What the waits themselves return, end to end: a canceled event wait and a send to a
// closed channel.
TEST(sync_wait_result, waits_return_it) {
  static_assert(std::is_same_v<decltype(std::declval<saturn::event&>().wait().await_resume()), wait_result>);
  saturn::runtime rt;
  saturn::event ev;
  std::stop_source stop;
  stop.request_stop();
  saturn::task_context ctx = rt.root_context();
  ctx.token = stop.get_token();
  auto h = saturn::spawn_in(ctx, [](saturn::event& e) -> saturn::task<saturn::result<void>> {
    co_return co_await e.wait();
  }(ev));
  const saturn::result<void> waited = rt.block_on(
      [](saturn::join_handle<saturn::result<void>> j) -> saturn::task<saturn::result<void>> { co_return co_await std::move(j); }(
          std::move(h)));
  ASSERT_FALSE(waited.has_value());
  EXPECT_TRUE(waited.err() == std::errc::operation_canceled);
  EXPECT_STREQ(waited.err().operation, "event::wait");

  saturn::channel<int> ch(1);
  ch.close();
  const saturn::result<void> sent = rt.block_on([](saturn::channel<int>& c) -> saturn::task<saturn::result<void>> {
    co_return co_await c.send(1);
  }(ch));
  ASSERT_FALSE(sent.has_value());
  EXPECT_TRUE(sent.err() == std::errc::broken_pipe);
}

}  // namespace
