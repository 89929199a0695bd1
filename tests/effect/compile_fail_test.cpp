// Misused pipelines are rejected at compile time with a message that says what is wrong.
// Runs compile_fail/bad_pipeline.cpp through the compiler named by SATURN_CXX (gtest
// cannot know CMAKE_CXX_COMPILER); skipped when it is not set.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <vector>

namespace {

struct run_result {
  int status = -1;
  std::string output;
};

run_result compile(const std::string& cxx, const std::string& define) {
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.rfind('/'));
  const std::string root = dir + "/../..";
  const std::string cmd = cxx + " -std=c++20 -fsyntax-only -I" + root + "/include -D" + define + " " + dir +
                          "/compile_fail/bad_pipeline.cpp 2>&1";
  run_result out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr)
    return out;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), static_cast<int>(chunk.size()), pipe) != nullptr)
    out.output += chunk.data();
  const int st = ::pclose(pipe);
  out.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

TEST(effect_compile_fail, misused_pipelines_are_rejected_with_a_clear_message) {
  const char* cxx = std::getenv("SATURN_CXX");
  if (cxx == nullptr || *cxx == '\0')
    GTEST_SKIP() << "set SATURN_CXX to a C++20 compiler (e.g. SATURN_CXX=g++) to run the compile-fail checks";
  const char* cases[][2] = {
      {"SATURN_CASE_THEN_WRONG_ARGUMENT", "then(f): f cannot be called with the value of the effect before it"},
      {"SATURN_CASE_THEN_ARGUMENT_ON_VOID", "then(f): f cannot be called with the value of the effect before it"},
      {"SATURN_CASE_UPON_ERROR_WRONG_TYPE", "upon_error(f): f must return the value type"},
      {"SATURN_CASE_LET_VALUE_NOT_AN_EFFECT", "let_value(f): f must return an effect"},
      {"SATURN_CASE_WHEN_ANY_MIXED_TYPES", "when_any(e...): every effect must have the same value type"},
      {"SATURN_CASE_EVALUATE_NEEDS_A_LOOP", "evaluate(e): e contains an operation that needs a loop"},
  };
  // The compilations are independent: two at a time (the machine has two cores).
  const run_result control = compile(cxx, "SATURN_CASE_OK");
  ASSERT_EQ(control.status, 0) << "the control case must compile:\n" << control.output;
  for (std::size_t i = 0; i < std::size(cases); i += 2) {
    std::vector<std::future<run_result>> bad;
    for (std::size_t j = i; j < std::min(i + 2, std::size(cases)); ++j)
      bad.push_back(std::async(std::launch::async, compile, std::string(cxx), std::string(cases[j][0])));
    for (std::size_t j = 0; j < bad.size(); ++j) {
      SCOPED_TRACE(cases[i + j][0]);
      const run_result r = bad[j].get();
      EXPECT_NE(r.status, 0) << "compiled although the pipeline is wrong";
      EXPECT_NE(r.output.find(cases[i + j][1]), std::string::npos) << "the diagnostic does not carry the message:\n"
                                                                  << r.output.substr(0, 3000);
    }
  }
}

}  // namespace
