// Pure pipelines (no loop): every operator's value, error and exception paths, checked
// against the same computation written directly, including randomized chains.
#include <gtest/gtest.h>
#include <saturn/effect/effect.hpp>

#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

namespace {
namespace fx = saturn::effect;

saturn::error io_error(const char* op) { return saturn::error{std::make_error_code(std::errc::io_error), op}; }

TEST(effect_pure, just_then_chain_matches_direct_code) {
  auto o = fx::evaluate(fx::just(20) | fx::then([](int x) { return x + 1; }) | fx::then([](int x) { return x * 2; }));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(*o, 42);
  auto v = fx::evaluate(fx::just() | fx::then([] { return std::string("hi"); }));
  EXPECT_EQ(*v, "hi");
  int side = 0;
  auto w = fx::evaluate(fx::just(5) | fx::then([&](int x) { side = x; }));
  EXPECT_TRUE(w.has_value());
  EXPECT_EQ(side, 5);
}

TEST(effect_pure, randomized_chains_against_an_oracle) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t x = rng(), a = rng() | 1, b = rng() % 63;
    auto o = fx::evaluate(fx::just(x) | fx::then([a](std::uint64_t v) { return v * a; }) |
                          fx::then([b](std::uint64_t v) { return v >> b; }) |
                          fx::let_value([a](std::uint64_t& v) { return fx::just(v ^ a); }));
    ASSERT_TRUE(o.has_value());
    EXPECT_EQ(*o, ((x * a) >> b) ^ a);
  }
}

TEST(effect_pure, errors_pass_through_then_untouched) {
  int calls = 0;
  auto o = fx::evaluate(fx::just_error<int>(io_error("disk")) | fx::then([&](int x) {
                          ++calls;
                          return x;
                        }));
  ASSERT_FALSE(o.has_value());
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(o.error().err() == std::errc::io_error);
  EXPECT_STREQ(o.error().err().operation, "disk");
  EXPECT_EQ(o.error().message().rfind("disk: ", 0), 0u);
}

TEST(effect_pure, an_exception_in_then_becomes_a_failure) {
  auto o = fx::evaluate(fx::just(1) | fx::then([](int) -> int { throw std::runtime_error("boom"); }) |
                        fx::then([](int x) { return x + 1; }));
  ASSERT_FALSE(o.has_value());
  EXPECT_TRUE(o.error().is_exception());
  EXPECT_EQ(o.error().message(), "exception: boom");
  EXPECT_THROW(o.value(), std::runtime_error);
}

TEST(effect_pure, upon_error_recovers_and_sees_the_error) {
  std::string seen;
  auto o = fx::evaluate(fx::just_error<int>(io_error("read")) | fx::upon_error([&](const fx::failure& f) {
                          seen = f.message();
                          return -1;
                        }) |
                        fx::then([](int x) { return x * 10; }));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(*o, -10);
  EXPECT_EQ(seen.rfind("read: ", 0), 0u);
  // A value passes upon_error untouched.
  auto v = fx::evaluate(fx::just(3) | fx::upon_error([](const fx::failure&) { return 0; }));
  EXPECT_EQ(*v, 3);
  // An exception thrown by the recovery is not swallowed.
  auto t = fx::evaluate(fx::just_error<int>(io_error("x")) |
                        fx::upon_error([](const fx::failure&) -> int { throw std::logic_error("again"); }));
  ASSERT_FALSE(t.has_value());
  EXPECT_TRUE(t.error().is_exception());
}

TEST(effect_pure, let_value_keeps_the_value_alive_and_forwards_errors) {
  auto o = fx::evaluate(fx::just(std::string("abc")) | fx::let_value([](std::string& s) {
                          return fx::just(s.size()) | fx::then([&s](std::size_t n) { return s + std::to_string(n); });
                        }));
  EXPECT_EQ(*o, "abc3");
  int calls = 0;
  auto e = fx::evaluate(fx::just_error<int>(io_error("first")) | fx::let_value([&](int&) {
                          ++calls;
                          return fx::just(1);
                        }));
  EXPECT_FALSE(e.has_value());
  EXPECT_EQ(calls, 0);
  auto inner = fx::evaluate(fx::just(1) | fx::let_value([](int&) { return fx::just_error<int>(io_error("second")); }));
  ASSERT_FALSE(inner.has_value());
  EXPECT_STREQ(inner.error().err().operation, "second");
  auto thrown = fx::evaluate(fx::just(1) | fx::let_value([](int&) -> fx::just_effect<int> { throw std::runtime_error("no"); }));
  ASSERT_FALSE(thrown.has_value());
  EXPECT_TRUE(thrown.error().is_exception());
}

TEST(effect_pure, when_all_tuples_values_and_reports_the_first_error) {
  auto o = fx::evaluate(fx::when_all(fx::just(1), fx::just(), fx::just(std::string("x"))));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(std::get<0>(*o), 1);
  EXPECT_EQ(std::get<2>(*o), "x");
  auto e = fx::evaluate(fx::when_all(fx::just(1), fx::just_error<int>(io_error("b")), fx::just_error<int>(io_error("c"))));
  ASSERT_FALSE(e.has_value());
  EXPECT_STREQ(e.error().err().operation, "b");
}

TEST(effect_pure, when_any_takes_the_first_to_end) {
  auto o = fx::evaluate(fx::when_any(fx::just(1), fx::just(2)));
  EXPECT_EQ(*o, 1);
  auto e = fx::evaluate(fx::when_any(fx::just_error<int>(io_error("a")), fx::just(2)));
  ASSERT_FALSE(e.has_value());
  EXPECT_STREQ(e.error().err().operation, "a");
}

TEST(effect_pure, composition_allocates_nothing_and_folds_types) {
  // The type of a pipeline is the fold of its operators; its size is its captures'.
  auto p = fx::just(1) | fx::then([](int x) { return x + 1; }) | fx::then([](int x) { return x * 2; });
  static_assert(std::is_same_v<fx::value_of<decltype(p)>, int>);
  static_assert(fx::completes_inline<decltype(p)>);
  static_assert(sizeof(p) == sizeof(int));
  static_assert(!fx::completes_inline<decltype(fx::nop() | fx::then([] { return 1; }))>);
  EXPECT_EQ(*fx::evaluate(std::move(p)), 4);
}

TEST(effect_pure, retry_policy_delays) {
  using std::chrono::milliseconds;
  fx::retry_policy p{.max_attempts = 5, .backoff = milliseconds(10), .multiplier = 2.0, .max_backoff = milliseconds(50)};
  EXPECT_EQ(p.delay_after(1), milliseconds(10));
  EXPECT_EQ(p.delay_after(2), milliseconds(20));
  EXPECT_EQ(p.delay_after(3), milliseconds(40));
  EXPECT_EQ(p.delay_after(4), milliseconds(50));
  EXPECT_EQ(p.delay_after(40), milliseconds(50));
  EXPECT_EQ(fx::retry_policy{}.delay_after(3), std::chrono::nanoseconds(0));
  EXPECT_FALSE(fx::retry_policy::retryable(fx::failure::canceled("x")));
  EXPECT_FALSE(fx::retry_policy::retryable(fx::failure(std::make_exception_ptr(1))));
  EXPECT_TRUE(fx::retry_policy::retryable(fx::failure(io_error("x"))));
}

}  // namespace
