// The HTTP/1.1 server under the simulator (http_scenario.hpp): a bounded number of seeds
// here; `make sim` runs thousands.
#include "sim/scenarios.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace sim = saturn::sim;

namespace {

const sim::options& scenario_options() { return saturn::sim_scenarios::find("http")->opts; }

TEST(SimHttp, ServerScenarioPassesForEverySeed) {
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t completions = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    sim::outcome o = sim::run(seed, scenario_options(), saturn::sim_scenarios::http_server_scenario);
    ASSERT_TRUE(o.ok) << "seed " << seed << ": " << o.failure
                      << "\nreplay: build/release/bin/saturn-sim --scenario http --seed " << seed;
    completions += o.completions;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("300 seeds in %.2f s, %llu completions\n", secs, static_cast<unsigned long long>(completions));
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
  const auto* s = saturn::sim_scenarios::find("http-bulk");
  ASSERT_NE(s, nullptr);
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    sim::outcome o = sim::run(seed, s->opts, s->prog);
    ASSERT_TRUE(o.ok) << "seed " << seed << ": " << o.failure
                      << "\nreplay: build/release/bin/saturn-sim --scenario http-bulk --seed " << seed;
  }
}

TEST(SimHttp, UnderInjectedFaultsEveryAnswerIsRightAndTheServerDrains) {
  const auto* s = saturn::sim_scenarios::find("http-faults");
  ASSERT_NE(s, nullptr);
  std::uint64_t faults = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    sim::outcome o = sim::run(seed, s->opts, s->prog);
    ASSERT_TRUE(o.ok) << "seed " << seed << ": " << o.failure
                      << "\nreplay: build/release/bin/saturn-sim --scenario http-faults --seed " << seed;
    faults += o.faults_injected;
  }
  EXPECT_GT(faults, 200u) << "the schedule must really inject faults";
}

}  // namespace
