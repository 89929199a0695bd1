// result<void>: success and error without a flag (an error's operation is never null).
#include <saturn/result.hpp>

#include <gtest/gtest.h>

#include <string>
#include <system_error>

namespace {

TEST(result_void, success_is_empty_and_throws_nothing) {
  saturn::result<void> r;
  EXPECT_TRUE(r.has_value());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_FALSE(r.code());
  EXPECT_NO_THROW(r.value());
  EXPECT_FALSE(r.err().code);  // meaningless on success, but safe to read
  EXPECT_STREQ(r.err().operation, "");
}

TEST(result_void, an_error_keeps_its_code_and_operation) {
  saturn::result<void> r = saturn::error{std::make_error_code(std::errc::operation_canceled), "event::wait"};
  EXPECT_FALSE(r.has_value());
  EXPECT_EQ(r.code(), std::make_error_code(std::errc::operation_canceled));
  EXPECT_EQ(r.err().message(), "event::wait: " + std::make_error_code(std::errc::operation_canceled).message());
  EXPECT_THROW(r.value(), std::system_error);
}

TEST(result_void, an_error_without_an_operation_is_still_an_error) {
  saturn::result<void> r = saturn::error{std::make_error_code(std::errc::timed_out), nullptr};
  EXPECT_FALSE(r.has_value());
  EXPECT_STREQ(r.err().operation, "");
  EXPECT_EQ(r.code(), std::make_error_code(std::errc::timed_out));
}

TEST(result_void, copies_keep_the_state) {
  saturn::result<void> e = saturn::error{std::make_error_code(std::errc::broken_pipe), "send"};
  saturn::result<void> ok;
  saturn::result<void> e2 = e;
  ok = e2;
  EXPECT_FALSE(ok.has_value());
  e2 = saturn::result<void>{};
  EXPECT_TRUE(e2.has_value());
}

}  // namespace
