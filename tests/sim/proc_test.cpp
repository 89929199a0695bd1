// The processes layer under the simulator (scenarios.hpp, proc_scenario): a bounded
// number of seeds here; `make sim` runs thousands.
#include <gtest/gtest.h>

#include "sim/seeds.hpp"

namespace sim = saturn::sim;

namespace {

TEST(SimProc, SupervisorUnderKillsCrashesAndLinkStorms) {
  auto r = saturn::sim_scenarios::run_seeds("proc", 200);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
}

TEST(SimProc, IsAFunctionOfTheSeed) {
  const auto* s = saturn::sim_scenarios::find("proc");
  for (std::uint64_t seed : {5u, 50u}) {
    sim::outcome a = sim::run(seed, s->opts, s->prog);
    sim::outcome b = sim::run(seed, s->opts, s->prog);
    ASSERT_TRUE(a.ok && b.ok) << a.failure << b.failure;
    EXPECT_EQ(a.trace_hash, b.trace_hash) << "seed " << seed;
  }
}

}  // namespace
