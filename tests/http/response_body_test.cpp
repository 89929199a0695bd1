// response bodies without a server: owned, static and shared (with_shared_body), and what
// write_response puts on the wire for each.
#include <saturn/http/response.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

using saturn::http::response;

TEST(response_body, a_shared_body_is_the_slice_and_outlives_the_callers_pointer) {
  auto bytes = std::make_shared<const std::string>("0123456789");
  std::weak_ptr<const std::string> watch = bytes;
  response r = response::with_shared_body(200, "text/plain", bytes, 2, 5);
  bytes.reset();
  ASSERT_FALSE(watch.expired());  // the response holds it
  EXPECT_EQ(r.body(), "23456");
  response copy = r;
  response moved = std::move(r);
  EXPECT_EQ(copy.body(), "23456");
  EXPECT_EQ(moved.body(), "23456");
}

TEST(response_body, a_shared_body_is_clamped_to_the_bytes) {
  auto bytes = std::make_shared<const std::string>("abc");
  EXPECT_EQ(response::with_shared_body(200, "text/plain", bytes, 1).body(), "bc");
  EXPECT_EQ(response::with_shared_body(200, "text/plain", bytes, 9, 4).body(), "");
  EXPECT_EQ(response::with_shared_body(200, "text/plain", nullptr).body(), "");
}

TEST(response_body, set_body_drops_the_shared_bytes) {
  auto bytes = std::make_shared<const std::string>("shared");
  std::weak_ptr<const std::string> watch = bytes;
  response r = response::with_shared_body(200, "text/plain", std::move(bytes));
  r.set_body("owned");
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(r.body(), "owned");
}

TEST(response_body, the_writer_sends_head_then_exactly_the_body) {
  std::string big(100000, 'x');
  big[0] = 'a';
  big.back() = 'z';
  auto bytes = std::make_shared<const std::string>(big);
  std::string out = "previous";
  saturn::http::write_response(out, response::with_shared_body(200, "text/plain", bytes), {}, "saturn");
  ASSERT_TRUE(out.starts_with("previousHTTP/1.1 200 OK\r\n"));
  EXPECT_NE(out.find("\r\nContent-Length: 100000\r\n"), std::string::npos);
  auto head_end = out.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos);
  EXPECT_EQ(out.substr(head_end + 4), big);
  std::string head_only;
  saturn::http::write_response(head_only, response::with_shared_body(200, "text/plain", bytes),
                               {.head = true}, "saturn");
  EXPECT_TRUE(head_only.ends_with("\r\n\r\n"));
  EXPECT_NE(head_only.find("Content-Length: 100000"), std::string::npos);
}

}  // namespace
