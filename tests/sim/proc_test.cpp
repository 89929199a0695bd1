// The processes layer under the simulator (scenarios.hpp, proc_scenario): a bounded
// number of seeds here; `make sim` runs thousands.
#include <gtest/gtest.h>

#include "sim/scenarios.hpp"

namespace sim = saturn::sim;

namespace {

TEST(SimProc, SupervisorUnderKillsCrashesAndLinkStorms) {
  const auto* s = saturn::sim_scenarios::find("proc");
  ASSERT_NE(s, nullptr);
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    sim::outcome o = sim::run(seed, s->opts, s->prog);
    ASSERT_TRUE(o.ok) << "seed " << seed << ": " << o.failure
                      << "\nreplay: build/release/bin/saturn-sim --scenario proc --seed " << seed;
  }
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
