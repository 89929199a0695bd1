// The HTTP/2 (h2c) server under the simulator (scenarios.hpp, h2_server_scenario): a
// bounded number of seeds here; `make sim` runs thousands.
#include <gtest/gtest.h>

#include "sim/seeds.hpp"

namespace sim = saturn::sim;

namespace {

TEST(SimH2, EveryStreamAnsweredRightUnderResetsSmallWindowsAndSlowReaders) {
  auto r = saturn::sim_scenarios::run_seeds("h2", 300);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
}

TEST(SimH2, OnATwoWorkerPool) {
  auto r = saturn::sim_scenarios::run_seeds("h2-pool", 150);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
}

TEST(SimH2, IsAFunctionOfTheSeed) {
  const auto* s = saturn::sim_scenarios::find("h2");
  ASSERT_NE(s, nullptr);
  for (std::uint64_t seed : {3u, 30u}) {
    sim::outcome a = saturn::sim_scenarios::run_one(*s, seed);
    sim::outcome b = saturn::sim_scenarios::run_one(*s, seed);
    ASSERT_TRUE(a.ok && b.ok) << a.failure << b.failure;
    EXPECT_EQ(a.trace_hash, b.trace_hash) << "seed " << seed;
  }
}

}  // namespace
