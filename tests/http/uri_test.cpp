// The URI pieces of src/http/uri.hpp alone: IPv4/IPv6 literals checked against inet_pton
// (the oracle) on random candidates, Host values, origin-form scanning, and the
// authority- and absolute-form targets.
#include "http/uri.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace uri = saturn::http::detail;

TEST(http_uri, ip_literals_agree_with_inet_pton) {
  std::mt19937_64 rng(2024);
  const std::string hex = "0123456789abcdefABCDEF";
  unsigned char buf[16];
  int valid6 = 0, valid4 = 0;
  for (int round = 0; round < 20000; ++round) {
    // IPv6-shaped candidates: groups of 0-5 hex digits, ':' or "::" between them, sometimes
    // a dotted quad at the end.
    std::string s;
    for (int g = 0, n = static_cast<int>(rng() % 10); g < n; ++g) {
      if (g > 0 || rng() % 8 == 0)
        s += rng() % 6 == 0 ? "::" : ":";
      for (int d = 0, k = static_cast<int>(rng() % 6); d < k; ++d)
        s += hex[rng() % hex.size()];
    }
    if (rng() % 4 == 0) {
      if (!s.empty())
        s += ':';
      s.append(std::to_string(rng() % 300)).append(".").append(std::to_string(rng() % 300)).append(".");
      s.append(std::to_string(rng() % 260)).append(".").append(rng() % 5 == 0 ? "01" : std::to_string(rng() % 256));
    }
    if (rng() % 10 == 0)
      s += ":";
    bool want = ::inet_pton(AF_INET6, s.c_str(), buf) == 1;
    valid6 += want;
    ASSERT_EQ(uri::valid_ipv6(s), want) << "[" << s << "]";
    // IPv4-shaped candidates.
    std::string v;
    for (int p = 0, n = 1 + static_cast<int>(rng() % 5); p < n; ++p) {
      if (p > 0)
        v += '.';
      if (rng() % 7 == 0)
        v += '0';  // a leading zero: not a dec-octet
      v += std::to_string(rng() % 280);
    }
    want = ::inet_pton(AF_INET, v.c_str(), buf) == 1;
    valid4 += want;
    ASSERT_EQ(uri::valid_ipv4(v), want) << v;
  }
  // The candidates must exercise both answers, or the oracle proves little.
  EXPECT_GT(valid6, 500);
  EXPECT_GT(valid4, 500);
}

TEST(http_uri, host_values) {
  for (const char* h : {"", "a", "A.b-c_d~e", "127.0.0.1", "a:", "a:0", ":80", "a:65536", "[::]", "[::1]:443",
                        "[fe80::1:2]", "[v7.a:b]", "%41", "a%2Eb", "!$&'()*+,;="})
    EXPECT_TRUE(uri::valid_host(h)) << h;
  for (const char* h : {" ", "a b", "a\t", "u@a", "a:b", "a:1:2", "a:-1", "a:1 ", "a/b", "a?b", "a#b", "a%",
                        "a%4", "a%g1", "[", "[]", "[::1", "::1", "[::1]a", "[::1]:a", "[a::1::]", "[v.a]",
                        "[v1]", "[v1.]", "[fe80::1%25eth0]", "a\"b", "a<b", "a\x7f", "a\x80"})
    EXPECT_FALSE(uri::valid_host(h)) << h;
}

TEST(http_uri, origin_form_scan_stops_at_the_first_foreign_byte) {
  auto stop = [](std::string_view s) { return uri::scan_origin(s.data(), 0, s.size()); };
  EXPECT_EQ(stop("/a/b?c=d&e/f?g"), 14u);
  EXPECT_EQ(stop("/a%20b"), 6u);
  EXPECT_EQ(stop("/a b"), 2u);
  EXPECT_EQ(stop("/a#b"), 2u);
  EXPECT_EQ(stop("/a%2"), 2u);
  EXPECT_EQ(stop("/a%2x"), 2u);
  EXPECT_EQ(stop("/a%"), 2u);
  EXPECT_EQ(stop("/{"), 1u);
  // Every byte: allowed exactly when it is a pchar, '/' or '?' (RFC 3986 §3.3-3.4).
  const std::string_view allowed =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?";
  for (int c = 0; c < 256; ++c) {
    char s[2] = {static_cast<char>(c), 'a'};
    bool want = allowed.find(static_cast<char>(c)) != std::string_view::npos;
    EXPECT_EQ(uri::scan_origin(s, 0, 2) == 2, want) << c;
  }
}

TEST(http_uri, authority_and_absolute_forms) {
  for (const char* t : {"a:443", "a:", "[::1]:443", "1.2.3.4:80"})
    EXPECT_TRUE(uri::valid_authority_form(t)) << t;
  for (const char* t : {"a", "[::1]", "u@a:443", "a:443/", "a:x", ""})
    EXPECT_FALSE(uri::valid_authority_form(t)) << t;
  for (const char* t : {"http://a", "http://a/", "http://a:8080/b/c?d=e/f", "HTTPS://[::1]/", "x+y-z.w://a?q",
                        "http://a?x", "http://a/%41"})
    EXPECT_TRUE(uri::valid_absolute_form(t)) << t;
  for (const char* t : {"", "http", "http:", "http:/a", "http://", "http:///a", "http://:80/", "http://u@a/",
                        "http://a b/", "1a://b/", "-a://b/", "ht_tp://a/", "http://a/#f", "http://a/%zz",
                        "http://a/ b", "http://[::1/"})
    EXPECT_FALSE(uri::valid_absolute_form(t)) << t;
}
