// A seed replays across processes, not only within one: two runs of saturn-sim give every
// scenario the same trace digest. This is what keeping connections inside the world
// (src/ring/sim/net.cpp) and a virtual HTTP date bought: before, bulk transfers and
// HTTP/2 differed between runs of the same seeds on a busy machine.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "support/run_program.hpp"

namespace {

/// Each scenario's summary line: "NAME: N seeds passed in ... traces HEX)".
std::map<std::string, std::string> digests(const std::string& out) {
  std::map<std::string, std::string> d;
  static const std::regex line(R"(([a-z0-9-]+): \d+ seeds passed in .* traces ([0-9a-f]{16})\))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    d[(*it)[1]] = (*it)[2];
  return d;
}

TEST(SimReplay, AnotherProcessGivesEverySeedOfEveryScenarioTheSameTrace) {
  const std::string cmd = std::string(SATURN_SIM_BIN) + " --scenario all --seeds 60 2>&1";
  const auto [first, status1] = saturn_test::run_command(cmd);
  const auto [second, status2] = saturn_test::run_command(cmd);
  ASSERT_EQ(status1, 0) << first;
  ASSERT_EQ(status2, 0) << second;
  const auto a = digests(first);
  const auto b = digests(second);
  EXPECT_GE(a.size(), 12u) << first;  // every scenario reported
  EXPECT_EQ(a, b) << "first run:\n" << first << "\nsecond run:\n" << second;
}

}  // namespace
