// saturn-sim: runs the simulator's scenarios (tests/sim/scenarios.hpp) over many seeds and
// prints the first failing seed with the command that replays it. `make sim SEEDS=N`.
//
//   saturn-sim [--scenario NAME|all] [--seeds N] [--first S]   explore seeds S .. S+N-1
//   saturn-sim --scenario NAME --seed S                        replay one seed
//   --traces: also print every seed's trace hash (compare two runs with diff)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "sim/scenarios.hpp"

namespace sc = saturn::sim_scenarios;

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: saturn-sim [--scenario NAME|all] [--seeds N] [--first S] [--traces]\n"
               "       saturn-sim --scenario NAME --seed S\nscenarios:");
  for (const sc::scenario& s : sc::all())
    std::fprintf(stderr, " %.*s", static_cast<int>(s.name.size()), s.name.data());
  std::fprintf(stderr, "\n");
  return 2;
}

bool parse_u64(const char* s, std::uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(s, &end, 10);
  return errno == 0 && end != s && *end == '\0';
}

const char* kind_name(saturn::testing::op_kind k) {
  static const char* const names[] = {"nop", "read", "write", "recv", "send", "accept", "connect",
                                      "open", "close", "statx", "fsync", "timeout"};
  const auto i = static_cast<std::size_t>(k);
  return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

/// Shortens the failing seed's fault schedule and prints what is left.
void print_minimized(const sc::scenario& s, std::uint64_t seed) {
  saturn::sim::options m = saturn::sim::minimize_faults(seed, s.opts, s.prog);
  std::printf("minimized fault schedule (%zu of %zu rules still fail seed %llu):", m.faults.size(), s.opts.faults.size(),
              static_cast<unsigned long long>(seed));
  for (const auto& r : m.faults)
    std::printf(" {%s, %s, p=%g}", kind_name(r.kind), r.error == 0 ? "short" : std::strerror(r.error), r.probability);
  std::printf("\n");
}

/// Explores one scenario; returns false on a failure (after printing it).
bool explore(const sc::scenario& s, std::uint64_t first, std::uint64_t count, const char* self, bool traces_each) {
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t completions = 0, faults = 0;
  std::uint64_t traces = 0;  // every seed's trace hash folded in order: equal across runs iff all replayed
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    saturn::sim::outcome o = sc::run_one(s, seed);
    completions += o.completions;
    traces = (traces ^ o.trace_hash) * 0x100000001b3ULL;
    if (traces_each)
      std::printf("%.*s seed %llu trace %016llx\n", static_cast<int>(s.name.size()), s.name.data(),
                  static_cast<unsigned long long>(seed), static_cast<unsigned long long>(o.trace_hash));
    faults += o.faults_injected;
    if (!o.ok) {
      std::printf("%.*s: seed %llu FAILED after %llu seed(s): %s\nreplay: %s --scenario %.*s --seed %llu\n",
                  static_cast<int>(s.name.size()), s.name.data(), static_cast<unsigned long long>(seed),
                  static_cast<unsigned long long>(seed - first), o.failure.c_str(), self,
                  static_cast<int>(s.name.size()), s.name.data(), static_cast<unsigned long long>(seed));
      if (!s.opts.faults.empty())
        print_minimized(s, seed);
      return false;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.*s: %llu seeds passed in %.1f s (%.0f seeds/s, %llu completions, %llu faults injected, traces %016llx)\n",
              static_cast<int>(s.name.size()), s.name.data(), static_cast<unsigned long long>(count), secs,
              static_cast<double>(count) / secs, static_cast<unsigned long long>(completions),
              static_cast<unsigned long long>(faults), static_cast<unsigned long long>(traces));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view name = "all";
  std::uint64_t seeds = 1000, first = 1, one = 0;
  bool replay = false, traces_each = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--traces") {
      traces_each = true;
      continue;
    }
    if (i + 1 >= argc)
      return usage();
    if (a == "--scenario")
      name = argv[++i];
    else if (a == "--seeds" && parse_u64(argv[i + 1], seeds))
      ++i;
    else if (a == "--first" && parse_u64(argv[i + 1], first))
      ++i;
    else if (a == "--seed" && parse_u64(argv[i + 1], one))
      ++i, replay = true;
    else
      return usage();
  }
  if (replay) {
    const sc::scenario* s = sc::find(name);
    if (s == nullptr)
      return usage();
    saturn::sim::outcome o = sc::run_one(*s, one);
    std::printf("%.*s seed %llu: %s; trace %016llx, %llu completions, %.3f s of virtual time\n%s%s",
                static_cast<int>(s->name.size()), s->name.data(), static_cast<unsigned long long>(one),
                o.ok ? "passed" : "FAILED", static_cast<unsigned long long>(o.trace_hash),
                static_cast<unsigned long long>(o.completions), std::chrono::duration<double>(o.virtual_time).count(),
                o.failure.c_str(), o.failure.empty() ? "" : "\n");
    return o.ok ? 0 : 1;
  }
  bool ok = true;
  bool any = false;
  for (const sc::scenario& s : sc::all()) {
    if (name != "all" && s.name != name)
      continue;
    any = true;
    ok = explore(s, first, seeds, argv[0], traces_each) && ok;
  }
  if (!any)
    return usage();
  return ok ? 0 : 1;
}
