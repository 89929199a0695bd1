/// \file
/// `sim::run`: one whole program in a fresh simulated world, reproducible from its seed;
/// `sim::explore`: many seeds, stopping at the first failure.
///
/// ```
/// auto scenario = [](saturn::sim::world& w) -> saturn::task<void> {
///   co_await saturn::sleep_for(std::chrono::hours(1));  // instant: virtual time
/// };
/// saturn::sim::outcome o = saturn::sim::run(42, {}, scenario);
/// if (!o.ok) std::fprintf(stderr, "%s\n", o.failure.c_str());
/// ```
#pragma once

#include <saturn/sched/thread_pool.hpp>
#include <saturn/sim/world.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/task.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace saturn::sim {

/// What one simulated run did.
struct outcome {
  std::uint64_t seed = 0;
  bool ok = false;
  /// Empty when ok; else what failed: the program's exception, a deadlock (naming what was
  /// in flight) or the time limit.
  std::string failure;
  std::uint64_t trace_hash = 0;     ///< same seed, same program: same hash
  std::uint64_t completions = 0;    ///< completions the simulated kernel delivered
  std::chrono::nanoseconds virtual_time{0};
  std::uint64_t faults_injected = 0;  ///< errors and short transfers from options::faults
};

/// The program: a task run on a saturn::runtime inside the world (it may spawn more).
using program = std::function<task<void>(world&)>;

/// The runtime a simulated program gets: the defaults, with a small receive-buffer ring
/// (a run sets it up afresh, thousands of times per test).
runtime_options default_runtime_options();

/// Runs `prog` in a fresh world made from `seed` and `opts`, on a runtime built on the
/// calling thread, and destroys both. Never throws for the program's own failures: they
/// are in the outcome. Threading: no other sim::world may live meanwhile.
outcome run(std::uint64_t seed, const options& opts, const program& prog,
            const runtime_options& ropts = default_runtime_options());

/// The pool a simulated program gets from run(seed, opts, prog, pool_options): `workers`
/// io-mode workers, each loop with default_runtime_options()'s small receive-buffer ring.
pool_options default_pool_options(unsigned workers = 2);

/// As run() above, on a saturn::thread_pool of `popts.threads` workers (0 is taken as 2)
/// built inside the world. Such a pool starts no thread: the run steps its workers one
/// scheduling step at a time on the calling thread, each step's worker drawn from the
/// seed, so which worker runs, steals or polls its ring when is part of the seeded
/// schedule and the same seed gives the same trace. Spinning and parking do not happen;
/// spawn_blocking runs its call inline (in virtual time); fork-join runs its branches on
/// the joining worker. Threading: as run().
outcome run(std::uint64_t seed, const options& opts, const program& prog, const pool_options& popts);

/// Runs seeds first_seed, first_seed+1, ... (count of them) and returns the first failing
/// outcome, or nullopt when all passed.
std::optional<outcome> explore(std::uint64_t first_seed, std::uint64_t count, const options& opts,
                               const program& prog, const runtime_options& ropts = default_runtime_options());
/// explore() on a simulated thread_pool (see the pool's run()).
std::optional<outcome> explore(std::uint64_t first_seed, std::uint64_t count, const options& opts,
                               const program& prog, const pool_options& popts);

/// The failure minimizer: for a seed that fails under `opts.faults`, returns options whose
/// fault schedule is as short as it could make it while the seed still fails — rules
/// dropped one at a time, then each remaining probability halved (up to 8 times) — in at
/// most `budget` runs. A failure that needs no fault at all comes back with none.
/// Threading: as run().
options minimize_faults(std::uint64_t seed, const options& opts, const program& prog, int budget = 64,
                        const runtime_options& ropts = default_runtime_options());

}  // namespace saturn::sim
