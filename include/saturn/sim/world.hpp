/// \file
/// Deterministic simulation: a simulated kernel under the loop and a virtual clock, so a
/// whole saturn program is a function of a seed.
///
/// While a `sim::world` lives, every ring set up on its thread is simulated: its SQ and CQ
/// are plain memory, and each io_uring_enter goes to the world instead of the kernel. The
/// world
///   * completes every operation after a latency its seeded PRNG picks (so independent
///     operations complete in a seed-chosen order, cancels race completions), keeping
///     completions on one descriptor in submission order;
///   * keeps time: saturn::clock reads the world's virtual clock; an enter costs a little
///     virtual time; a loop that waits jumps the clock to the next event at once (an hour
///     of timers takes microseconds);
///   * implements timeouts, linked timeouts, cancellation (by user_data, by fd, any/all),
///     NOPs and MSG_RING itself, in virtual time;
///   * passes operations on real descriptors (files, sockets, pipes, eventfds) through to
///     the real kernel without ever blocking: it performs each one at the moment it picks,
///     non-blocking, and parks one that would block until its descriptor is ready;
///   * keeps TCP between endpoints of the program inside the world: a connect to a port
///     one of the program's listeners listens on becomes an AF_UNIX stream pair (no timer,
///     no deferred kernel work), queued in connect order for that listener's accept, whose
///     ends answer getsockname/getpeername (through saturn::net) with the TCP addresses
///     they stand for. A connection to anything outside the program stays real TCP.
///     Descriptor numbers and ports are left out of the trace;
///   * detects a deadlock: a loop that waits while nothing in the world can ever complete
///     (no event scheduled, no parked descriptor ready) gets sim::deadlock_error, naming
///     what is in flight, instead of hanging.
/// Every completion is folded into a trace hash (virtual time, ring, opcode, result,
/// flags; never addresses or descriptor numbers): the same seed gives the same hash.
///
/// The simulation is single-threaded: rings must be set up on the world's thread. A
/// saturn::runtime made there runs as usual; a saturn::thread_pool made there starts no
/// thread: whoever waits for it on the world's thread (block_on, sim::run) steps its
/// workers one at a time, each step's worker drawn from the seed (see sim::run). Without
/// a world the cost is one predicted branch per enter and per clock read, and one per
/// thread_pool construction.
///
/// Threading: construct, use and destroy a world on one thread; worlds do not nest.
#pragma once

#include <saturn/testing/fault_injection.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace saturn::ring {
class sim_kernel;
}

namespace saturn::sim {

/// How the simulated kernel behaves. Every duration is virtual time.
struct options {
  /// Latency of a completion: uniform in [min_latency, max_latency], drawn per operation.
  std::chrono::nanoseconds min_latency{500};
  std::chrono::nanoseconds max_latency{20'000};
  /// Virtual time one io_uring_enter costs (a loop that polls without waiting still sees
  /// time pass, as it would on a real machine).
  std::chrono::nanoseconds enter_cost{300};
  /// Probability that a cancel which finds its target already completing reports
  /// -EALREADY rather than -ENOENT (the kernel returns either, depending on timing).
  double cancel_already = 0.5;
  /// A run whose virtual clock passes this much after the world began fails with
  /// sim::time_limit_error (a livelock, or a program that never ends).
  std::chrono::nanoseconds time_limit = std::chrono::hours(24 * 7);
  /// Real time a world stuck with only parked real descriptors (and no event) waits for
  /// one of them before it reports a deadlock. 0: report at once, which suits a closed
  /// program (its own descriptors can only be made ready by itself); raise it when the
  /// program waits for something outside (a child process, a server in another process),
  /// at the price of determinism.
  std::chrono::milliseconds external_wait{0};
  /// Faults to inject (saturn/testing/fault_injection.hpp's rules: errors and short
  /// transfers). sim::run installs a testing::fault_scope with them, seeded from the run's
  /// seed, so the fault schedule replays with the seed too; a world made by hand leaves
  /// this to its user.
  std::vector<testing::fault_rule> faults{};
  /// Bytes by which regular files may grow through simulated writes during the run (the
  /// free space of the simulated disk): a write past it is cut short at the last free
  /// byte, and one that can write nothing fails with ENOSPC. Overwrites inside a file cost
  /// nothing; space is never given back (a truncate or unlink does not free any).
  std::uint64_t disk_space = ~std::uint64_t{0};
};

/// A loop waited while nothing in the simulated world could ever complete.
class deadlock_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The virtual clock passed options::time_limit.
class time_limit_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// While it lives, rings set up on this thread are simulated and saturn::clock is virtual
/// (see the file comment). Throws std::logic_error when another world lives.
class world {
 public:
  explicit world(std::uint64_t seed, const options& opts = {});
  ~world();
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  /// The seed this world was made with.
  std::uint64_t seed() const noexcept;
  /// The hash of every completion delivered so far (see the file comment).
  std::uint64_t trace_hash() const noexcept;
  /// Completions delivered so far, over every simulated ring.
  std::uint64_t completions() const noexcept;
  /// Virtual time elapsed since the world began.
  std::chrono::nanoseconds elapsed() const noexcept;
  /// A pseudo-random number from the world's own stream (for a scenario's choices, so they
  /// replay with the seed too).
  std::uint64_t random() noexcept;
  /// Uniform in [0, n); 0 when n is 0.
  std::uint64_t random_below(std::uint64_t n) noexcept;
  /// A power loss: every write to a regular file made through a simulated ring since that
  /// file's last successful fsync or fdatasync (through a ring too) is undone — the bytes
  /// it overwrote get their old contents back and the file its durable size. What a
  /// program saw acknowledged by an fsync survives; nothing else is promised, as on a
  /// real disk. Metadata is not simulated: creations, renames, unlinks and O_TRUNC stay,
  /// and writes made with plain system calls are not tracked. Stop the tasks that write
  /// first (a crash does not stop the program); afterwards, reopen and check what is
  /// there, as a restarted program would. Returns the number of files changed.
  std::size_t crash() noexcept;
  /// Bytes files grew by through simulated writes (what options::disk_space bounds).
  std::uint64_t disk_used() const noexcept;

  /// A network partition: TCP connections with `port` at either end (and connects to it,
  /// and accepts on it) move nothing until heal(port) — their operations stay in flight
  /// (timeouts still fire, cancels still work) and data sent before stays queued. With
  /// nothing else to wait for, a program that waits on them is reported as a deadlock.
  /// The ports are a listener's, or a client's local port (getsockname: for a
  /// connection inside the world, the port the world gave it). World thread only.
  void partition(std::uint16_t port);
  /// Ends partition(port) or reset(port): the connections' operations go on.
  void heal(std::uint16_t port);
  /// A reset: every operation on a connection with `port` at either end, in flight or
  /// submitted later, fails with ECONNRESET (a connect to it with ECONNREFUSED) until
  /// heal(port). Operations whose result was already decided complete as decided.
  void reset(std::uint16_t port);

 private:
  std::shared_ptr<ring::sim_kernel> m_kernel;
};

}  // namespace saturn::sim
