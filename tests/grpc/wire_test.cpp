// gRPC's wire pieces (src/grpc/wire.hpp): the length-prefixed message, grpc-timeout,
// grpc-message's percent-encoding.
#include "grpc/wire.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using namespace saturn::grpc::detail;

TEST(grpc_wire, frames_round_trip_and_partial_input_waits) {
  std::string buf;
  append_frame(buf, "abc");
  append_frame(buf, "");
  ASSERT_EQ(buf, std::string("\0\0\0\0\3abc\0\0\0\0\0", 13));
  std::string_view msg;
  std::size_t used = 0;
  EXPECT_EQ(take_frame(buf.substr(0, 7), 100, msg, used), frame_status::incomplete);
  EXPECT_EQ(take_frame(buf.substr(0, 4), 100, msg, used), frame_status::incomplete);
  ASSERT_EQ(take_frame(buf, 100, msg, used), frame_status::message);
  EXPECT_EQ(msg, "abc");
  EXPECT_EQ(used, 8u);
  ASSERT_EQ(take_frame(std::string_view(buf).substr(8), 100, msg, used), frame_status::message);
  EXPECT_EQ(msg, "");
}

TEST(grpc_wire, oversized_and_compressed_messages_are_told_apart) {
  std::string_view msg;
  std::size_t used = 0;
  const std::string big("\0\0\1\0\0", 5);  // 65536 bytes announced
  EXPECT_EQ(take_frame(big, 65535, msg, used), frame_status::too_large);
  EXPECT_EQ(take_frame(big, 65536, msg, used), frame_status::incomplete);
  const std::string compressed("\1\0\0\0\1x", 6);
  EXPECT_EQ(take_frame(compressed, 100, msg, used), frame_status::compressed);
}

TEST(grpc_wire, timeouts_parse_per_the_spec) {
  EXPECT_EQ(parse_timeout("100m"), std::chrono::nanoseconds(100ms));
  EXPECT_EQ(parse_timeout("5S"), std::chrono::nanoseconds(5s));
  EXPECT_EQ(parse_timeout("2M"), std::chrono::nanoseconds(2min));
  EXPECT_EQ(parse_timeout("1H"), std::chrono::nanoseconds(1h));
  EXPECT_EQ(parse_timeout("7u"), std::chrono::nanoseconds(7us));
  EXPECT_EQ(parse_timeout("99999999n"), std::chrono::nanoseconds(99999999));
  EXPECT_FALSE(parse_timeout("100"));        // no unit
  EXPECT_FALSE(parse_timeout("m"));          // no digits
  EXPECT_FALSE(parse_timeout("123456789S"));  // more than 8 digits
  EXPECT_FALSE(parse_timeout("10x"));
  EXPECT_FALSE(parse_timeout("-1S"));
}

TEST(grpc_wire, messages_are_percent_encoded) {
  EXPECT_EQ(percent_encode("plain text"), "plain text");
  EXPECT_EQ(percent_encode("100%"), "100%25");
  EXPECT_EQ(percent_encode("a\nb"), "a%0Ab");
  EXPECT_EQ(percent_encode("\xc3\xbc"), "%C3%BC");
}
