// Misused pipelines that must not compile (checked by compile_fail_test.cpp when SATURN_CXX
// names a compiler). Each SATURN_CASE_* selects one mistake; SATURN_CASE_OK must compile.
#include <saturn/effect/effect.hpp>

#include <string>

namespace fx = saturn::effect;

void cases() {
#if defined(SATURN_CASE_OK)
  auto e = fx::just(1) | fx::then([](int x) { return x + 1; }) | fx::upon_error([](const fx::failure&) { return 0; });
  (void)fx::evaluate(std::move(e));
#elif defined(SATURN_CASE_THEN_WRONG_ARGUMENT)
  auto e = fx::just(1) | fx::then([](const std::string& s) { return s.size(); });
  (void)e;
#elif defined(SATURN_CASE_THEN_ARGUMENT_ON_VOID)
  auto e = fx::nop() | fx::then([](int x) { return x; });
  (void)e;
#elif defined(SATURN_CASE_UPON_ERROR_WRONG_TYPE)
  auto e = fx::just(1) | fx::upon_error([](const fx::failure&) { return std::string("no"); });
  (void)e;
#elif defined(SATURN_CASE_LET_VALUE_NOT_AN_EFFECT)
  auto e = fx::just(1) | fx::let_value([](int& x) { return x; });
  (void)e;
#elif defined(SATURN_CASE_WHEN_ANY_MIXED_TYPES)
  auto e = fx::when_any(fx::just(1), fx::just(std::string("x")));
  (void)e;
#elif defined(SATURN_CASE_EVALUATE_NEEDS_A_LOOP)
  (void)fx::evaluate(fx::nop());
#endif
}
