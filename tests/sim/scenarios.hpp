// Whole-program scenarios for the simulator: used by the sim tests (a bounded number of
// seeds), by the mutant tests (each deliberately broken build must fail one within 1,000
// seeds) and by saturn-sim (`make sim`, thousands of seeds). A failure is an exception
// out of the program (or the simulator's deadlock / time limit).
#pragma once

#include <saturn/sim/run.hpp>

#include <exception>
#include <string_view>
#include <vector>

namespace saturn::sim_scenarios {

/// Eight tasks doing seed-chosen mixes of NOPs, sleeps, kernel timeouts and timeouts racing
/// sleeps; every task must finish.
task<void> timers_scenario(sim::world& w);

/// A loopback echo server and clients; each client reads its echoes through a multishot
/// receive() and closes while it is still armed, and the server must see every close.
task<void> echo_scenario(sim::world& w);

/// One HTTP/1.1 server, seed-chosen clients (pipelining, uploads, slow senders, resets,
/// silent and slow readers) and receive modes; every answer checked, the server drained.
task<void> http_server_scenario(sim::world& w);

/// The HTTP scenario with uploads (up to 200 kB) and slow downloads (300 kB) past the
/// sockets' buffers: backpressure and the send timeout. Its trace is not bit-for-bit a
/// function of the seed: TCP delays some acknowledgements on a real-time timer.
task<void> http_bulk_scenario(sim::world& w);

/// The HTTP scenario under injected faults (resets, aborted accepts, refused connects,
/// short sends and receives: options::faults): clients may lose their connection, but
/// every answer that arrives must be right and the server must drain.
task<void> http_faults_scenario(sim::world& w);

/// A one_for_one supervisor under seed-chosen kills, crashes and link storms, and a
/// client whose every answer must be right; every process ends after the stop.
task<void> proc_scenario(sim::world& w);

/// Producers and consumers on a bounded channel under a mutex, a spawn storm the other
/// workers steal from, and a pipe between two tasks: on a simulated thread_pool, so the
/// seed interleaves the workers. Every sum is checked.
task<void> pool_scenario(sim::world& w);

/// nghttp2 clients speaking h2c (prior knowledge) to the server: concurrent streams of
/// GETs and uploads, small flow-control windows, slow readers, streams cancelled with
/// RST_STREAM and connections reset; every answer checked, the server drained.
task<void> h2_server_scenario(sim::world& w);

/// Whole files written with fs::write_file (some with sync) under short writes and a
/// disk too small for all of them, then a crash at a seed-chosen moment: a write that
/// succeeded wrote everything, and one that succeeded with sync survives the crash.
task<void> files_scenario(sim::world& w);

struct scenario {
  std::string_view name;
  sim::program prog;
  sim::options opts;
  /// 0: the program runs on a saturn::runtime; N: on a simulated thread_pool of N workers.
  unsigned workers = 0;
};

/// One seed of `s`, on the runtime or pool it asks for.
inline sim::outcome run_one(const scenario& s, std::uint64_t seed, const sim::options& opts) {
  return s.workers == 0 ? sim::run(seed, opts, s.prog) : sim::run(seed, opts, s.prog, sim::default_pool_options(s.workers));
}
inline sim::outcome run_one(const scenario& s, std::uint64_t seed) { return run_one(s, seed, s.opts); }

/// Awaits every handle of `hs` (so no task outlives what the scenario's frame holds for
/// it), keeps the first failure in `first` for the caller to rethrow, and empties `hs`
/// (pool_scenario.cpp).
task<void> await_all(std::vector<join_handle<void>>& hs, std::exception_ptr& first);

/// Every scenario, with the options it runs under.
const std::vector<scenario>& all();
/// The scenario named `name`, or null.
const scenario* find(std::string_view name);

}  // namespace saturn::sim_scenarios
