// address: parsing of good and bad input (never a crash, always an error value naming
// "address::parse") and formatting round trips.
#include <saturn/net/address.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>

using saturn::net::address;

TEST(Address, ParsesIpv4) {
  auto a = address::parse("127.0.0.1:8080");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->is_v4());
  EXPECT_EQ(a->port(), 8080);
  EXPECT_EQ(a->to_string(), "127.0.0.1:8080");
  EXPECT_EQ(*a, address::loopback_v4(8080));
}

TEST(Address, ParsesIpv6) {
  auto a = address::parse("[::1]:443");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->is_v6());
  EXPECT_EQ(a->port(), 443);
  EXPECT_EQ(a->to_string(), "[::1]:443");
  EXPECT_EQ(*a, address::loopback_v6(443));
  auto b = address::parse("[2001:db8::ff00:42:8329]:0");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->to_string(), "[2001:db8::ff00:42:8329]:0");
}

TEST(Address, ParsesHostAndPortSeparately) {
  auto a = address::parse("10.1.2.3", 9);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->to_string(), "10.1.2.3:9");
  auto b = address::parse("::ffff:1.2.3.4", 7);
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->is_v6());
  auto c = address::parse("localhost:5");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->to_string(), "127.0.0.1:5");
  EXPECT_EQ(address::loopback_v4(1).with_port(99).port(), 99);
}

TEST(Address, RejectsBadInput) {
  const char* bad[] = {"",           ":",           "1.2.3.4",        "1.2.3.4:",       "1.2.3.4:65536",
                       "1.2.3.4:-1", "1.2.3.4:8x",  "1.2.3.4:123456", "256.1.1.1:80",   "1.2.3:80",
                       "::1:80",     "[::1]",       "[::1]80",        "[::1:80",        "[1.2.3.4]:80",
                       "[]:80",      "host.name:80", "1.2.3.4 :80",   " 1.2.3.4:80",    "[::1]:",
                       "[::g]:1",    "1.2.3.4:80:1"};
  for (const char* s : bad) {
    auto a = address::parse(s);
    ASSERT_FALSE(a.has_value()) << "accepted: '" << s << "'";
    EXPECT_EQ(a.err(), std::errc::invalid_argument) << s;
    EXPECT_STREQ(a.err().operation, "address::parse");
  }
}

TEST(Address, RandomBytesNeverCrash) {
  std::mt19937 rng(42);
  const std::string alphabet = "0123456789abcdef:.[]% x-";
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 48);
    for (int k = 0; k < n; ++k)
      s.push_back(alphabet[rng() % alphabet.size()]);
    auto a = address::parse(s);
    if (a.has_value()) {
      // Whatever parses formats back to something that parses to the same address.
      auto b = address::parse(a->to_string());
      ASSERT_TRUE(b.has_value()) << s;
      EXPECT_EQ(*a, *b) << s;
    }
  }
}

TEST(Address, UnixPaths) {
  auto a = address::unix_path("/tmp/x.sock");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->is_unix());
  EXPECT_EQ(a->to_string(), "/tmp/x.sock");
  auto ab = address::unix_path("@abstract");
  ASSERT_TRUE(ab.has_value());
  EXPECT_EQ(ab->to_string(), "@abstract");
  EXPECT_FALSE(address::unix_path("").has_value());
  auto longp = address::unix_path(std::string(200, 'a'));
  ASSERT_FALSE(longp.has_value());
  EXPECT_EQ(longp.err(), std::errc::filename_too_long);
}
