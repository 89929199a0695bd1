// Compile-fail checks shared by the test modules: compile a source file once per
// SATURN_CASE_* define with the compiler named by SATURN_CXX (gtest cannot know
// CMAKE_CXX_COMPILER) and expect every bad case to fail with its message while the
// control case (SATURN_CASE_OK) compiles. Skipped when SATURN_CXX is not set.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <span>
#include <string>
#include <vector>

namespace saturn_test {

struct compile_result {
  int status = -1;
  std::string output;
};

/// One case: the define and the text its diagnostic must carry.
struct compile_case {
  const char* define;
  const char* message;
};

/// The build's generated headers (saturn/config.hpp), passed by tests/CMakeLists.txt.
#ifdef SATURN_GENERATED_INCLUDE
inline const std::string k_generated_include = std::string(" -I") + SATURN_GENERATED_INCLUDE;
#else
inline const std::string k_generated_include;
#endif

/// `-fsyntax-only` of `source` with -D`define`, include path `root`/include (and the
/// build's generated headers).
inline compile_result compile_with(const std::string& cxx, const std::string& root, const std::string& source,
                                   const std::string& define) {
  const std::string cmd = cxx + " -std=c++20 -fsyntax-only -I" + root + "/include" + k_generated_include + " -D" +
                          define + " " + source + " 2>&1";
  compile_result out;
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

/// Runs the control case and every bad case of `source` (two compilations at a time: the
/// machine has two cores) and reports each bad case that compiles or lacks its message.
inline void expect_rejected(const std::string& root, const std::string& source, std::span<const compile_case> cases) {
  const char* cxx = std::getenv("SATURN_CXX");
  if (cxx == nullptr || *cxx == '\0')
    GTEST_SKIP() << "set SATURN_CXX to a C++20 compiler (e.g. SATURN_CXX=g++) to run the compile-fail checks";
  const compile_result control = compile_with(cxx, root, source, "SATURN_CASE_OK");
  ASSERT_EQ(control.status, 0) << "the control case must compile:\n" << control.output;
  for (std::size_t i = 0; i < cases.size(); i += 2) {
    std::vector<std::future<compile_result>> bad;
    for (std::size_t j = i; j < std::min(i + 2, cases.size()); ++j)
      bad.push_back(std::async(std::launch::async, compile_with, std::string(cxx), root, source,
                               std::string(cases[j].define)));
    for (std::size_t j = 0; j < bad.size(); ++j) {
      SCOPED_TRACE(cases[i + j].define);
      const compile_result r = bad[j].get();
      EXPECT_NE(r.status, 0) << "compiled although the code is wrong";
      EXPECT_NE(r.output.find(cases[i + j].message), std::string::npos)
          << "the diagnostic does not carry the message:\n"
          << r.output.substr(0, 3000);
    }
  }
}

}  // namespace saturn_test
