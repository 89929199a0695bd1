// One deliberately broken build of saturn (tests/sim/mutants/CMakeLists.txt replaces one
// source file of the library with a copy carrying the bug): the simulator must catch it
// within 1,000 seeds of its scenario.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <utility>

#include "sim/scenarios.hpp"

namespace {

TEST(SimMutant, CaughtWithinAThousandSeeds) {
  const saturn::sim_scenarios::scenario* s = saturn::sim_scenarios::find(SATURN_MUTANT_SCENARIO);
  ASSERT_NE(s, nullptr);
  std::optional<saturn::sim::outcome> failure;
  for (std::uint64_t seed = 1; seed <= 1000 && !failure; ++seed) {
    saturn::sim::outcome o = saturn::sim_scenarios::run_one(*s, seed);
    if (!o.ok)
      failure = std::move(o);
  }
  ASSERT_TRUE(failure.has_value()) << "mutant " SATURN_MUTANT_NAME " survived 1,000 seeds of the "
                                   << SATURN_MUTANT_SCENARIO << " scenario";
  std::printf("mutant %s caught by the %s scenario at seed %llu: %.300s\n", SATURN_MUTANT_NAME,
              SATURN_MUTANT_SCENARIO, static_cast<unsigned long long>(failure->seed), failure->failure.c_str());
}

}  // namespace
