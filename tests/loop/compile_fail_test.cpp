// The callback tier rejects wrong callables at compile time with a message that names the
// expected signature. Runs compile_fail/bad_callback.cpp through the compiler named by
// SATURN_CXX (gtest cannot know CMAKE_CXX_COMPILER); skipped when it is not set.
#include "support/compile_fail.hpp"

#include <string>

namespace {

TEST(compile_fail, wrong_callables_are_rejected_with_a_clear_message) {
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.rfind('/'));
  const saturn_test::compile_case cases[] = {
      {"SATURN_CASE_NOP_WITHOUT_RESULT", "nop(fn): fn must be callable as fn(int res)"},
      {"SATURN_CASE_READ_WRONG_ARGUMENT", "read(..., fn): fn must be callable as fn(int res)"},
      {"SATURN_CASE_READ_NON_CALLABLE", "read(..., fn): fn must be callable as fn(int res)"},
      {"SATURN_CASE_DEFER_WITH_ARGUMENT", "defer(fn): fn must be callable as fn()"},
      {"SATURN_CASE_AFTER_WITH_ARGUMENT", "after(d, fn): fn must be callable as fn()"},
      {"SATURN_CASE_TIMEOUT_TOO_MANY_ARGUMENTS", "timeout(d, fn): fn must be callable as fn(int res)"},
  };
  saturn_test::expect_rejected(dir + "/../..", dir + "/compile_fail/bad_callback.cpp", cases);
}

}  // namespace
