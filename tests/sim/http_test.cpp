// The HTTP/1.1 server under the simulator (http_scenario.hpp): a bounded number of seeds
// here; `make sim` runs thousands.
#include "sim/seeds.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace sim = saturn::sim;

namespace {

const sim::options& scenario_options() { return saturn::sim_scenarios::find("http")->opts; }

TEST(SimHttp, ServerScenarioPassesForEverySeed) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = saturn::sim_scenarios::run_seeds("http", 300);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("300 seeds in %.2f s, %llu completions\n", secs, static_cast<unsigned long long>(r.completions));
}

TEST(SimHttp, ServerScenarioIsAFunctionOfTheSeed) {
  for (std::uint64_t seed : {3u, 17u, 99u}) {
    sim::outcome a = sim::run(seed, scenario_options(), saturn::sim_scenarios::http_server_scenario);
    sim::outcome b = sim::run(seed, scenario_options(), saturn::sim_scenarios::http_server_scenario);
    ASSERT_TRUE(a.ok && b.ok) << a.failure << b.failure;
    EXPECT_EQ(a.trace_hash, b.trace_hash) << "seed " << seed;
    EXPECT_EQ(a.virtual_time, b.virtual_time) << "seed " << seed;
  }
}

TEST(SimHttp, BulkTransfersPastTheSocketBuffers) {
  auto r = saturn::sim_scenarios::run_seeds("http-bulk", 100);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
}

TEST(SimHttp, UnderInjectedFaultsEveryAnswerIsRightAndTheServerDrains) {
  auto r = saturn::sim_scenarios::run_seeds("http-faults", 200);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
  EXPECT_GT(r.faults, 200u) << "the schedule must really inject faults";
}

}  // namespace
