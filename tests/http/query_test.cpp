// query_params: the WHATWG urlencoded parser's cases (web-platform-tests'
// urlencoded-parser), random queries checked against a plain split-and-decode oracle,
// lookups and repeated names, typed reads and their errors, no copy for plain values, and
// request::query() over a parsed request.
#include <saturn/http/parser.hpp>
#include <saturn/http/query.hpp>
#include <saturn/http/request.hpp>

#include <gtest/gtest.h>

#include <climits>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace saturn::http {
// gtest prints a decoded as its text.
inline void PrintTo(const decoded& d, std::ostream* os) { *os << '"' << d.view() << '"'; }
}  // namespace saturn::http

using saturn::http::decode_mode;
using saturn::http::decoded;
using saturn::http::query_params;
using pairs = std::vector<std::pair<std::string, std::string>>;

namespace {

pairs parse(std::string_view raw) {
  pairs out;
  for (const auto& p : query_params(raw))
    out.emplace_back(p.name().str(), p.value().str());
  return out;
}

/// The oracle: the WHATWG steps done the obvious way, on std::string copies.
std::string oracle_decode(std::string s) {
  for (char& c : s)
    if (c == '+')
      c = ' ';
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

pairs oracle(const std::string& raw) {
  pairs out;
  std::size_t start = 0;
  while (start <= raw.size()) {
    std::size_t amp = raw.find('&', start);
    if (amp == std::string::npos)
      amp = raw.size();
    std::string piece = raw.substr(start, amp - start);
    start = amp + 1;
    if (piece.empty())
      continue;
    std::size_t eq = piece.find('=');
    std::string name = eq == std::string::npos ? piece : piece.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : piece.substr(eq + 1);
    out.emplace_back(oracle_decode(name), oracle_decode(value));
  }
  return out;
}

}  // namespace

// web-platform-tests url/urlencoded-parser.any.js, the byte-level cases (WHATWG replaces
// invalid UTF-8 with U+FFFD; these bytes are kept, as query.hpp says).
TEST(http_query, whatwg_urlencoded_parser_cases) {
  const std::vector<std::pair<std::string, pairs>> cases = {
      {"test", {{"test", ""}}},
      {"%EF%BB%BFtest=%EF%BB%BF", {{"\xEF\xBB\xBFtest", "\xEF\xBB\xBF"}}},
      {"%FE%FF", {{"\xFE\xFF", ""}}},
      {"\xE2\x80\xA0&\xE2\x80\xA0=x", {{"\xE2\x80\xA0", ""}, {"\xE2\x80\xA0", "x"}}},
      {"%C2", {{"\xC2", ""}}},
      {"%C2x", {{"\xC2x", ""}}},
      {"", {}},
      {"a", {{"a", ""}}},
      {"a=b", {{"a", "b"}}},
      {"a=", {{"a", ""}}},
      {"=b", {{"", "b"}}},
      {"&", {}},
      {"&a", {{"a", ""}}},
      {"a&", {{"a", ""}}},
      {"a&a", {{"a", ""}, {"a", ""}}},
      {"a&b&c", {{"a", ""}, {"b", ""}, {"c", ""}}},
      {"a=b&c=d", {{"a", "b"}, {"c", "d"}}},
      {"a=b&c=d&", {{"a", "b"}, {"c", "d"}}},
      {"&&&a=b&&&&c=d&", {{"a", "b"}, {"c", "d"}}},
      {"a=a&a=b&a=c", {{"a", "a"}, {"a", "b"}, {"a", "c"}}},
      {"a==a", {{"a", "=a"}}},
      {"a=a+b+c+d", {{"a", "a b c d"}}},
      {"%=a", {{"%", "a"}}},
      {"%a=a", {{"%a", "a"}}},
      {"%a_=a", {{"%a_", "a"}}},
      {"%61=a", {{"a", "a"}}},
      {"%61+%4d%4D=", {{"a MM", ""}}},
      {"id=0&value=%", {{"id", "0"}, {"value", "%"}}},
      {"b=%2sf%2a", {{"b", "%2sf*"}}},
      {"b=%2%2af%2a", {{"b", "%2*f*"}}},
      {"b=%%2a", {{"b", "%*"}}},
  };
  for (const auto& [raw, want] : cases)
    EXPECT_EQ(parse(raw), want) << raw;
}

TEST(http_query, semicolon_is_not_a_separator_and_plus_versus_2b) {
  EXPECT_EQ(parse("a=1;b=2"), (pairs{{"a", "1;b=2"}}));
  EXPECT_EQ(parse("a=1+2"), (pairs{{"a", "1 2"}}));
  EXPECT_EQ(parse("a=1%2B2"), (pairs{{"a", "1+2"}}));  // '+' replaced before %XX decoding
  EXPECT_EQ(parse("a=%2b"), (pairs{{"a", "+"}}));
  EXPECT_EQ(parse("a=%zz&b=%4"), (pairs{{"a", "%zz"}, {"b", "%4"}}));
  EXPECT_EQ(parse("a=%00"), (pairs{{"a", std::string(1, '\0')}}));
  EXPECT_EQ(parse("a=%2541"), (pairs{{"a", "%41"}}));  // decoded once, not twice
  EXPECT_EQ(parse("a=%26&b=%3D"), (pairs{{"a", "&"}, {"b", "="}}));
}

TEST(http_query, random_queries_match_the_oracle) {
  std::mt19937 rng(25);
  const std::string alphabet = "ab=&+%2Bfz;";
  for (int round = 0; round < 20000; ++round) {
    std::string raw;
    std::size_t len = rng() % 16;
    for (std::size_t i = 0; i < len; ++i)
      raw.push_back(alphabet[rng() % alphabet.size()]);
    pairs want = oracle(raw);
    ASSERT_EQ(parse(raw), want) << raw;
    // Every lookup agrees with the oracle's first match, count and get_all.
    query_params q(raw);
    for (const auto& [name, value] : want) {
      std::size_t n = 0;
      std::string first;
      std::vector<std::string> all;
      for (const auto& [n2, v2] : want)
        if (n2 == name) {
          if (n++ == 0)
            first = v2;
          all.push_back(v2);
        }
      auto got = q.get(name);
      ASSERT_TRUE(got.has_value()) << raw << " name " << name;
      EXPECT_EQ(*got, first) << raw;
      EXPECT_EQ(q.count(name), n) << raw;
      std::vector<std::string> got_all;
      for (auto& d : q.get_all(name))
        got_all.push_back(d.str());
      EXPECT_EQ(got_all, all) << raw;
    }
  }
}

TEST(http_query, lookups_decode_names_and_find_the_first) {
  query_params q("a=1&a=2&b&a%20b=3&c+d=4&e%2Bf=5&=empty&x=%41");
  EXPECT_EQ(q.get("a"), std::optional<decoded>(decoded(std::string_view("1"))));
  EXPECT_EQ(*q.get("a"), "1");
  ASSERT_EQ(q.get_all("a").size(), 2u);
  EXPECT_EQ(q.get_all("a")[1], "2");
  EXPECT_EQ(q.count("a"), 2u);
  EXPECT_TRUE(q.has("b"));
  EXPECT_EQ(*q.get("b"), "");
  EXPECT_EQ(*q.get("a b"), "3");
  EXPECT_EQ(*q.get("c d"), "4");
  EXPECT_EQ(*q.get("e+f"), "5");
  EXPECT_FALSE(q.has("e f"));
  EXPECT_FALSE(q.has("c+d"));  // the name is compared decoded
  EXPECT_EQ(*q.get(""), "empty");
  EXPECT_EQ(*q.get("x"), "A");
  EXPECT_FALSE(q.get("nope").has_value());
  EXPECT_FALSE(q.has("nope"));
  EXPECT_EQ(q.count("nope"), 0u);
  EXPECT_TRUE(q.get_all("nope").empty());
  EXPECT_FALSE(q.has("A"));  // names are case-sensitive
  EXPECT_FALSE(q.empty());
  EXPECT_TRUE(query_params("").empty());
  EXPECT_TRUE(query_params("&&").empty());
  EXPECT_TRUE(query_params().empty());
  EXPECT_FALSE(query_params().has(""));
}

TEST(http_query, plain_values_are_views_into_the_raw_text) {
  const std::string raw = "name=Alpha&n=42&s=a+b&p=%41";
  query_params q(raw);
  auto name = q.get("name");
  ASSERT_TRUE(name);
  EXPECT_FALSE(name->owns());
  EXPECT_EQ(name->data(), raw.data() + 5);
  auto s = q.get("s");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->owns());
  EXPECT_EQ(*s, "a b");
  EXPECT_TRUE(q.get("p")->owns());
  // A moved or copied owning value keeps its text.
  decoded moved = std::move(*s);
  decoded copied = moved;
  EXPECT_EQ(moved, "a b");
  EXPECT_EQ(copied, "a b");
  EXPECT_EQ(std::move(copied).str(), "a b");
}

TEST(http_query, percent_decode_modes) {
  EXPECT_EQ(saturn::http::percent_decode("a+b%20c", decode_mode::form), "a b c");
  EXPECT_EQ(saturn::http::percent_decode("a+b%20c", decode_mode::path), "a+b c");
  EXPECT_EQ(saturn::http::percent_decode("%2F%2f", decode_mode::path), "//");
  EXPECT_FALSE(saturn::http::percent_decode("a+b", decode_mode::path).owns());
  EXPECT_TRUE(saturn::http::percent_decode("a+b", decode_mode::form).owns());
  EXPECT_TRUE(saturn::http::detail::decoded_equals("%41%42", decode_mode::path, "AB"));
  EXPECT_FALSE(saturn::http::detail::decoded_equals("%41%42", decode_mode::path, "ABC"));
  EXPECT_FALSE(saturn::http::detail::decoded_equals("%41%42", decode_mode::path, "A"));
  EXPECT_FALSE(saturn::http::detail::decoded_equals("%41%42", decode_mode::path, ""));
  EXPECT_TRUE(saturn::http::detail::decoded_equals("%4", decode_mode::path, "%4"));
}

TEST(http_query, typed_integers) {
  query_params q("a=12&neg=-5&junk=12x&empty=&sp=+12&sp2=12+&plus=%2B12&hex=0x10&big=2147483648"
                 "&min=-2147483648&lmax=9223372036854775807&lover=9223372036854775808"
                 "&huge=99999999999999999999999x&enc=%31%32&frac=1.5&exp=1e3");
  EXPECT_EQ(*q.get<int>("a"), 12);
  EXPECT_EQ(*q.get<int>("neg"), -5);
  EXPECT_EQ(*q.get<int>("enc"), 12);
  EXPECT_EQ(*q.get<int>("min"), INT_MIN);
  EXPECT_EQ(*q.get<long>("big"), 2147483648L);
  EXPECT_EQ(*q.get<long>("lmax"), LONG_MAX);
  EXPECT_EQ(*q.get<unsigned long>("lover"), 9223372036854775808UL);
  for (const char* bad : {"junk", "empty", "sp", "sp2", "plus", "hex", "frac", "exp", "huge"}) {
    auto r = q.get<int>(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_TRUE(r.err() == std::errc::invalid_argument) << bad << ": " << r.err().message();
    EXPECT_STREQ(r.err().operation, saturn::http::param_error::not_integer);
  }
  for (auto r : {q.get<int>("big"), q.get<int>("lmax")}) {
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.err() == std::errc::result_out_of_range);
    EXPECT_STREQ(r.err().operation, saturn::http::param_error::integer_range);
  }
  EXPECT_TRUE(q.get<long>("lover").err() == std::errc::result_out_of_range);
  EXPECT_TRUE(q.get<short>("big").err() == std::errc::result_out_of_range);
  EXPECT_TRUE(q.get<unsigned>("neg").err() == std::errc::invalid_argument);  // no sign for unsigned
  auto missing = q.get<int>("nope");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(missing.err() == std::errc::no_message_available);
  EXPECT_FALSE(missing.err() == std::errc::invalid_argument);
  EXPECT_STREQ(missing.err().operation, saturn::http::param_error::missing);
}

TEST(http_query, typed_floating_point_and_bool) {
  query_params q("p=29.99&n=-1e3&d=.5&inf=inf&nan=nan&big=1e999&junk=1.5.2&sp=%201&t=true&T=TRUE&one=1"
                 "&f=false&zero=0&on=on&off=OFF&yes=yes&two=2&flag");
  EXPECT_DOUBLE_EQ(*q.get<double>("p"), 29.99);
  EXPECT_DOUBLE_EQ(*q.get<double>("n"), -1000.0);
  EXPECT_DOUBLE_EQ(*q.get<double>("d"), 0.5);
  EXPECT_FLOAT_EQ(*q.get<float>("p"), 29.99f);
  for (const char* bad : {"inf", "nan", "junk", "sp", "flag"}) {
    auto r = q.get<double>(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_TRUE(r.err() == std::errc::invalid_argument) << bad;
    EXPECT_STREQ(r.err().operation, saturn::http::param_error::not_number);
  }
  EXPECT_TRUE(q.get<double>("big").err() == std::errc::result_out_of_range);
  EXPECT_TRUE(q.get<float>("big").err() == std::errc::result_out_of_range);
  for (const char* t : {"t", "T", "one", "on"})
    EXPECT_TRUE(*q.get<bool>(t)) << t;
  for (const char* f : {"f", "zero", "off"})
    EXPECT_FALSE(*q.get<bool>(f)) << f;
  for (const char* bad : {"yes", "two", "flag"}) {
    auto r = q.get<bool>(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_TRUE(r.err() == std::errc::invalid_argument);
    EXPECT_STREQ(r.err().operation, saturn::http::param_error::not_boolean);
  }
  EXPECT_TRUE(q.has("flag"));  // a flag is tested with has(), not get<bool>
}

TEST(http_query, get_or_falls_back_on_missing_and_malformed) {
  query_params q("n=7&bad=x&s=a+b");
  EXPECT_EQ(q.get_or("n", 1), 7);
  EXPECT_EQ(q.get_or("bad", 1), 1);
  EXPECT_EQ(q.get_or("nope", 1), 1);
  EXPECT_EQ(q.get_or("nope", 2.5), 2.5);
  EXPECT_EQ(q.get_or("nope", true), true);
  EXPECT_EQ(q.get_or("s", "dflt"), "a b");
  EXPECT_EQ(q.get_or("nope", "dflt"), "dflt");
}

TEST(http_query, describe_names_the_parameter_and_quotes_its_text) {
  query_params q("count=12x&big=99999999999&weird=%22%0A%FF");
  EXPECT_EQ(q.describe("count", q.get<int>("count").err()), "query parameter \"count\": not an integer: \"12x\"");
  EXPECT_EQ(q.describe("big", q.get<int>("big").err()),
            "query parameter \"big\": integer out of range: \"99999999999\"");
  EXPECT_EQ(q.describe("nope", q.get<int>("nope").err()), "query parameter \"nope\": missing");
  EXPECT_EQ(q.describe("weird", q.get<int>("weird").err()),
            "query parameter \"weird\": not an integer: \"\\x22\\x0A\\xFF\"");
  std::string long_value = "x=" + std::string(100, '7') + "z";
  query_params l(long_value);
  EXPECT_EQ(l.describe("x", l.get<int>("x").err()),
            "query parameter \"x\": not an integer: \"" + std::string(64, '7') + "\"...");
  // The error's own message (no name) still says what failed.
  EXPECT_EQ(q.get<int>("count").err().message(), "parameter: not an integer: Invalid argument");
}

TEST(http_query, request_query_views_the_parsed_target) {
  std::string wire = "GET /search?q=saturn+rings&page=2&tag=a&tag=b HTTP/1.1\r\nHost: x\r\n\r\n";
  saturn::http::request_parser p;
  ASSERT_EQ(p.parse(wire.data(), wire.size()), saturn::http::parse_status::complete);
  const saturn::http::request& r = p.get();
  EXPECT_EQ(r.path, "/search");
  EXPECT_EQ(r.raw_query, "q=saturn+rings&page=2&tag=a&tag=b");
  auto q = r.query();
  EXPECT_EQ(*q.get("q"), "saturn rings");
  EXPECT_EQ(*q.get<int>("page"), 2);
  EXPECT_EQ(q.count("tag"), 2u);
  saturn::http::request none;
  EXPECT_TRUE(none.query().empty());
  EXPECT_FALSE(none.query().get<int>("page"));
}
