// The sim tests' common step: run seeds 1..count of a named scenario (scenarios.hpp), each
// failure reported with the command that replays it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/scenarios.hpp"

namespace saturn::sim_scenarios {

/// What seeds 1..count did, summed; `failed` is the first failing outcome (ok if none).
struct seeds_summary {
  std::uint64_t completions = 0;
  std::uint64_t faults = 0;
  sim::outcome failed{};
};

/// Runs seeds 1..count of scenario `name`, stopping at the first failure.
inline seeds_summary run_seeds(std::string_view name, std::uint64_t count) {
  seeds_summary s;
  s.failed.ok = true;
  const scenario* sc = find(name);
  if (sc == nullptr) {
    s.failed = {0, false, "no scenario named " + std::string(name)};
    return s;
  }
  for (std::uint64_t seed = 1; seed <= count; ++seed) {
    sim::outcome o = run_one(*sc, seed);
    s.completions += o.completions;
    s.faults += o.faults_injected;
    if (!o.ok) {
      o.failure += "\nreplay: build/release/bin/saturn-sim --scenario " + std::string(name) + " --seed " +
                   std::to_string(seed);
      s.failed = std::move(o);
      break;
    }
  }
  return s;
}

}  // namespace saturn::sim_scenarios
