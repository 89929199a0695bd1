// Whole-program scenarios for the simulator: used by the sim tests (a bounded number of
// seeds), by the mutant tests (each deliberately broken build must fail one within 1,000
// seeds) and by saturn-sim (`make sim`, thousands of seeds). A failure is an exception
// out of the program (or the simulator's deadlock / time limit).
#pragma once

#include <saturn/sim/run.hpp>

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

struct scenario {
  std::string_view name;
  sim::program prog;
  sim::options opts;
};

/// Every scenario, with the options it runs under.
const std::vector<scenario>& all();
/// The scenario named `name`, or null.
const scenario* find(std::string_view name);

}  // namespace saturn::sim_scenarios
