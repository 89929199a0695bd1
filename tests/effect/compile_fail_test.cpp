// Misused pipelines are rejected at compile time with a message that says what is wrong.
// Runs compile_fail/bad_pipeline.cpp through the compiler named by SATURN_CXX (gtest
// cannot know CMAKE_CXX_COMPILER); skipped when it is not set.
#include "support/compile_fail.hpp"

#include <string>

namespace {

TEST(effect_compile_fail, misused_pipelines_are_rejected_with_a_clear_message) {
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.rfind('/'));
  const saturn_test::compile_case cases[] = {
      {"SATURN_CASE_THEN_WRONG_ARGUMENT", "then(f): f cannot be called with the value of the effect before it"},
      {"SATURN_CASE_THEN_ARGUMENT_ON_VOID", "then(f): f cannot be called with the value of the effect before it"},
      {"SATURN_CASE_UPON_ERROR_WRONG_TYPE", "upon_error(f): f must return the value type"},
      {"SATURN_CASE_LET_VALUE_NOT_AN_EFFECT", "let_value(f): f must return an effect"},
      {"SATURN_CASE_WHEN_ANY_MIXED_TYPES", "when_any(e...): every effect must have the same value type"},
      {"SATURN_CASE_EVALUATE_NEEDS_A_LOOP", "evaluate(e): e contains an operation that needs a loop"},
  };
  saturn_test::expect_rejected(dir + "/../..", dir + "/compile_fail/bad_pipeline.cpp", cases);
}

}  // namespace
