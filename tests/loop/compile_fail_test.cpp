// The callback tier rejects wrong callables at compile time with a message that names the
// expected signature. Runs compile_fail/bad_callback.cpp through the compiler named by
// SATURN_CXX (gtest cannot know CMAKE_CXX_COMPILER); skipped when it is not set.
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
                          "/compile_fail/bad_callback.cpp 2>&1";
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

TEST(compile_fail, wrong_callables_are_rejected_with_a_clear_message) {
  const char* cxx = std::getenv("SATURN_CXX");
  if (cxx == nullptr || *cxx == '\0')
    GTEST_SKIP() << "set SATURN_CXX to a C++20 compiler (e.g. SATURN_CXX=g++) to run the compile-fail checks";
  const char* cases[][2] = {
      {"SATURN_CASE_NOP_WITHOUT_RESULT", "nop(fn): fn must be callable as fn(int res)"},
      {"SATURN_CASE_READ_WRONG_ARGUMENT", "read(..., fn): fn must be callable as fn(int res)"},
      {"SATURN_CASE_READ_NON_CALLABLE", "read(..., fn): fn must be callable as fn(int res)"},
      {"SATURN_CASE_DEFER_WITH_ARGUMENT", "defer(fn): fn must be callable as fn()"},
      {"SATURN_CASE_AFTER_WITH_ARGUMENT", "after(d, fn): fn must be callable as fn()"},
      {"SATURN_CASE_TIMEOUT_TOO_MANY_ARGUMENTS", "timeout(d, fn): fn must be callable as fn(int res)"},
  };
  // The compilations are independent: run them side by side.
  auto ok = std::async(std::launch::async, compile, std::string(cxx), std::string("SATURN_CASE_OK"));
  std::vector<std::future<run_result>> bad;
  for (const auto& c : cases)
    bad.push_back(std::async(std::launch::async, compile, std::string(cxx), std::string(c[0])));
  const run_result control = ok.get();
  ASSERT_EQ(control.status, 0) << "the control case must compile:\n" << control.output;
  for (std::size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(cases[i][0]);
    const run_result r = bad[i].get();
    EXPECT_NE(r.status, 0) << "compiled although the callable is wrong";
    EXPECT_NE(r.output.find(cases[i][1]), std::string::npos) << "the diagnostic does not carry the message:\n"
                                                            << r.output.substr(0, 3000);
  }
}

}  // namespace
