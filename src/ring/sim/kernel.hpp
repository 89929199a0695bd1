// The simulated kernel behind saturn::sim::world (include/saturn/sim/world.hpp): a virtual
// clock, a seeded event queue, and the ops of every simulated ring. Single-threaded: every
// member is called on the world's thread.
#pragma once

#include <liburing.h>

#include <saturn/sim/world.hpp>

#include "ring/sim/disk.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <sys/socket.h>
#include <unordered_map>
#include <vector>

namespace saturn::ring {

class sim_ring;

/// xoshiro256** seeded through splitmix64: small, fast, and the same sequence everywhere
/// (std's distributions are not specified bit for bit, so they are not used).
class sim_prng {
 public:
  explicit sim_prng(std::uint64_t seed) noexcept;
  std::uint64_t next() noexcept;
  /// Uniform in [0, n) (Lemire's multiply-shift); 0 when n is 0.
  std::uint64_t below(std::uint64_t n) noexcept;
  bool chance(double p) noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

 private:
  std::uint64_t m_s[4];
};

/// One operation inside the simulated kernel.
struct sim_op {
  enum class state : std::uint8_t {
    waiting,    // not complete: a timeout not yet due, or parked on a real descriptor
    scheduled,  // its result is decided; the CQE is posted at its event's time
    done,
  };
  std::uint64_t id = 0;  // submission order across the world
  sim_ring* ring = nullptr;
  /// The SQE as submitted (kept as bytes: io_uring_sqe ends in a flexible array member,
  /// which cannot be a member of another struct).
  alignas(io_uring_sqe) unsigned char sqe_bytes[sizeof(io_uring_sqe)] = {};
  const io_uring_sqe& sqe() const noexcept { return *reinterpret_cast<const io_uring_sqe*>(sqe_bytes); }
  state st = state::waiting;
  bool parked = false;   // waiting for a real descriptor (poll events in park_events)
  bool multishot = false;
  short park_events = 0;
  bool connecting = false;  // a CONNECT that got EINPROGRESS
  /// While parked, the op holds its own reference to the file (a dup), as an io_uring
  /// request holds the file it works on: a close(2) of the descriptor meanwhile neither
  /// ends the op nor closes the socket (no FIN) until the op completes or is cancelled.
  int pinned_fd = -1;
  int fd() const noexcept { return pinned_fd >= 0 ? pinned_fd : sqe().fd; }
  std::uint32_t gen = 0;
  int res = 0;
  unsigned cqe_flags = 0;
  std::uint64_t link_timeout = 0;  // id of the LINK_TIMEOUT guarding this op (0: none)
  std::uint64_t link_target = 0;   // for a LINK_TIMEOUT: the op it guards
  std::int64_t deadline = 0;
};

/// The world: clock, PRNG, events, and the ops of every ring.
class sim_kernel {
 public:
  sim_kernel(std::uint64_t seed, const sim::options& opts);
  ~sim_kernel();

  // ---- the world's state, for sim::world
  std::uint64_t seed() const noexcept { return m_seed; }
  std::uint64_t trace_hash() const noexcept { return m_hash; }
  std::uint64_t completions() const noexcept { return m_completions; }
  std::int64_t now() const noexcept { return m_now; }
  std::int64_t epoch() const noexcept { return m_epoch; }
  sim_prng& prng() noexcept { return m_rng; }
  sim_disk& disk() noexcept { return m_disk; }
  /// Folds a scheduler's choice into the trace hash (sim_hooks.hpp's sim_trace).
  void trace(std::uint64_t v) noexcept { fold(v); }
  /// What the network does to TCP connections on a port (world::partition / reset).
  enum class net_rule : std::uint8_t { open, cut, reset };
  void set_net_rule(std::uint16_t port, net_rule r);
  const sim::options& opts() const noexcept { return m_opts; }

  // ---- in-world TCP (src/ring/sim/net.cpp)
  /// A listening socket of the program: connects to its port become in-world connections.
  void note_listener(int fd);
  /// The address getsockname (peer: getpeername) would give for an in-world connection's
  /// descriptor, which is really one end of an AF_UNIX pair. False for any other descriptor.
  bool world_socket_name(int fd, bool peer, ::sockaddr_storage& out, ::socklen_t& len) const noexcept;
  /// True on the thread that made the world.
  bool on_world_thread() const noexcept;

  // ---- for sim_ring
  void attach(sim_ring* r);
  void detach(sim_ring* r) noexcept;
  /// Takes an SQE into the kernel. `prev` is the op submitted just before in the same
  /// batch (for IOSQE_IO_LINK), or null.
  sim_op* submit(sim_ring* r, const io_uring_sqe& sqe, sim_op* prev);
  /// Moves the clock by one enter's cost and runs everything now due.
  void step();
  /// Runs due events and re-polls parked descriptors until `ready()` holds or `deadline`
  /// (virtual ns, INT64_MAX: none) passes. Returns false on the deadline. Throws
  /// sim::deadlock_error / sim::time_limit_error.
  template <class Ready>
  bool wait_until(Ready ready, std::int64_t deadline);
  /// wait_until over the whole world: until any ring has a completion ready or
  /// `extra(ctx)` holds (see sim_hooks.hpp's sim_wait_any).
  void wait_any(bool (*extra)(void*), void* ctx, std::int64_t deadline);
  /// Posts the op's CQE now (and settles its linked timeout).
  void finish(sim_op* op, int res, unsigned flags);
  /// Decides an op's result now and posts it after a drawn latency (kept after the last
  /// completion scheduled on the same descriptor, so one fd's completions stay in order).
  void schedule(sim_op* op, int res, unsigned flags = 0);
  /// Posts a CQE on `r` (for ops that answer twice, MSG_RING's target, ...).
  void post(sim_ring* r, std::uint64_t user_data, int res, unsigned flags, unsigned opcode);
  /// Ring by its fake descriptor (MSG_RING), or null.
  sim_ring* ring_by_fd(int fd) const noexcept;
  /// The buffer a provided-buffer receive takes from group `bgid` of ring `r`.
  struct picked_buffer {
    void* addr = nullptr;
    unsigned len = 0;
    std::uint16_t bid = 0;
  };
  bool pick_buffer(sim_ring* r, unsigned bgid, picked_buffer& out) noexcept;

 private:
  struct event {
    std::int64_t time;
    std::uint64_t tiebreak;
    std::uint64_t op_id;
    std::uint32_t gen;  // the op's generation when scheduled (a multishot op re-arms)
    bool deadline;      // a timeout's expiry, not a decided completion
    bool operator>(const event& o) const noexcept {
      return time != o.time ? time > o.time : tiebreak > o.tiebreak;
    }
  };
  void start(sim_op* op, sim_op* prev);
  void start_cancel(sim_op* op);
  void start_real(sim_op* op);
  /// The network rule for a socket op (its descriptor's local and peer ports, or a
  /// CONNECT's target): open when no rule is set.
  net_rule net_rule_for(const sim_op* op) const noexcept;
  /// Tries a parked op's syscall again (its descriptor polled ready). True when it left
  /// the parked state (completed or scheduled).
  bool perform(sim_op* op);
  void add_event(std::int64_t time, sim_op* op, bool deadline);
  void run_due();
  /// One poll() over every parked op's descriptor; performs those that are ready.
  /// Returns how many made progress.
  int poll_parked(int timeout_ms);
  std::int64_t next_event_time() const noexcept;
  /// Nothing can complete: waits options::external_wait for a parked real descriptor,
  /// returns if one made progress, else throws sim::deadlock_error.
  void stuck();
  /// Throws sim::time_limit_error (once: teardown after a failure must not throw again,
  /// the loop's shutdown is noexcept).
  [[noreturn]] void fail_time_limit();
  void advance_to(std::int64_t t) noexcept;
  void cancel_op(sim_op* op);
  void forget(sim_op* op) noexcept;
  /// Parks `op` until its descriptor is ready, pinning the file (sim_op::pinned_fd).
  void park(sim_op* op);
  std::int64_t latency() noexcept;
  void fold(std::uint64_t v) noexcept;
  std::string describe_in_flight() const;

  // ---- in-world TCP (src/ring/sim/net.cpp)
  /// A CONNECT to a port one of the program's listeners listens on: the client's
  /// descriptor becomes one end of an AF_UNIX stream pair, the other end is queued for
  /// the listener's accept. True when it did (the connect succeeded); false: make it real.
  bool connect_in_world(sim_op* op);
  /// An ACCEPT on a listener with in-world connections queued: takes the first. True when
  /// it did (`res` is the new descriptor); false: accept for real.
  bool accept_in_world(sim_op* op, int& res);
  /// True when an ACCEPT on `listener_fd` would take an in-world connection now.
  bool accept_ready(int listener_fd) const noexcept;
  /// Before a CLOSE: a world socket closed with SO_LINGER 0 resets its peer, as TCP's RST.
  void note_world_close(int fd);
  /// Marks the peer of the world socket with inode `ino` reset (its operations fail with
  /// ECONNRESET from now on).
  void reset_peer(unsigned long ino) noexcept;
  /// True when `fd` is the end of an in-world connection its peer reset.
  bool world_reset(int fd) const noexcept;
  /// The local and peer ports of a socket (a world socket's emulated ones); false when
  /// `fd` is not a socket.
  bool socket_ports(int fd, std::uint16_t& local, std::uint16_t& peer) const noexcept;
  /// Queued in-world connections whose listener closed or was shut down are reset, as
  /// the kernel resets such a listener's accept queue. Called with every poll of parked ops.
  void reap_accept_queues();
  /// True when a listener of the program still listens on `port` (its descriptor names
  /// the same socket and SO_ACCEPTCONN holds); forgets those that no longer do.
  bool listening(std::uint16_t port);

  std::uint64_t m_seed;
  sim::options m_opts;
  sim_prng m_rng;
  std::int64_t m_epoch;
  std::int64_t m_now;
  std::uint64_t m_hash = 0xcbf29ce484222325ull;
  std::uint64_t m_completions = 0;
  std::uint64_t m_next_id = 1;
  bool m_failed = false;  // a deadlock or time limit was reported: the run is being torn down
  std::priority_queue<event, std::vector<event>, std::greater<>> m_events;
  std::unordered_map<std::uint64_t, std::unique_ptr<sim_op>> m_ops;
  std::vector<std::uint64_t> m_parked;  // ids of parked ops (stale ids skipped)
  std::unordered_map<int, std::int64_t> m_fd_last;  // last completion time per descriptor
  std::vector<sim_ring*> m_rings;
  sim_disk m_disk;
  std::unordered_map<std::uint16_t, net_rule> m_net;  // ports with a rule other than open
  /// In-world TCP. An end of an in-world connection, by its socket's inode number (unique
  /// while the socket lives; descriptor numbers are reused).
  struct world_socket {
    ::sockaddr_storage local{}, peer{};
    ::socklen_t len = 0;
    unsigned long peer_ino = 0;
    bool reset = false;  // its peer closed with SO_LINGER 0
  };
  std::unordered_map<unsigned long, world_socket> m_world_sockets;
  /// The program's listening sockets by port (several with SO_REUSEPORT): descriptor and
  /// inode, so a descriptor number reused for something else is not taken for one.
  struct world_listener {
    int fd = -1;
    unsigned long ino = 0;
  };
  std::unordered_map<std::uint16_t, std::vector<world_listener>> m_listeners;
  /// In-world connections not yet accepted, per listening port, in connect order: the
  /// pairs' server ends (their emulated addresses are in m_world_sockets). Listeners
  /// sharing a port (SO_REUSEPORT) share the queue.
  std::unordered_map<std::uint16_t, std::deque<int>> m_accept_queue;
  std::uint16_t m_next_port = 0;  // the last emulated ephemeral port given out
  unsigned m_world_resets = 0;  // world sockets marked reset (0: perform skips the check)
  unsigned m_ring_serial = 0;
  std::uintptr_t m_thread;
  friend class sim_ring;
};

/// The simulated side of one ring: the SQ and CQ memory the loop reads and writes as if
/// the kernel had mapped them. Owned by the ring (src/ring/ring.cpp).
class sim_ring {
 public:
  /// Points `ring`'s SQ and CQ at memory of this object's. Throws std::logic_error off the
  /// world's thread.
  sim_ring(std::shared_ptr<sim_kernel> k, io_uring& ring, unsigned sq_entries, unsigned cq_entries);
  ~sim_ring();
  sim_ring(const sim_ring&) = delete;
  sim_ring& operator=(const sim_ring&) = delete;

  /// io_uring_enter: submits, then waits for `wait_nr` CQEs or `timeout_ns` (< 0: no limit).
  int enter(unsigned wait_nr, std::int64_t timeout_ns);
  /// Submits without waiting, flushing overflowed CQEs.
  int submit();
  int fd() const noexcept { return m_fd; }
  unsigned serial() const noexcept { return m_serial; }
  int register_buf_ring(const io_uring_buf_reg& reg);
  int unregister_buf_ring(unsigned bgid);

  /// A CQE into the CQ (or the overflow list when it is full).
  void post(std::uint64_t user_data, int res, unsigned flags);
  unsigned cq_ready() const noexcept;
  /// A CQE is in the CQ or waits in the overflow list.
  bool has_completion() const noexcept { return cq_ready() != 0 || !m_overflow.empty(); }

 private:
  friend class sim_kernel;
  int consume();
  void flush_overflow() noexcept;

  std::shared_ptr<sim_kernel> m_kernel;
  io_uring& m_ring;
  unsigned m_serial;
  int m_fd;
  // The "mapped" memory.
  unsigned m_sq_head = 0, m_sq_tail = 0, m_sq_flags = 0, m_sq_dropped = 0, m_sq_mask, m_sq_entries;
  unsigned m_cq_head = 0, m_cq_tail = 0, m_cq_flags = 0, m_cq_overflow = 0, m_cq_mask, m_cq_entries;
  std::unique_ptr<io_uring_sqe[]> m_sqes;
  std::unique_ptr<io_uring_cqe[]> m_cqes;
  std::vector<io_uring_cqe> m_overflow;
  struct buf_group {
    io_uring_buf_ring* br = nullptr;
    unsigned entries = 0;
    std::uint16_t head = 0;
  };
  std::unordered_map<unsigned, buf_group> m_groups;
  std::vector<std::uint64_t> m_live;  // ids of this ring's ops not yet done (stale skipped)
};

/// The port of an AF_INET or AF_INET6 address; 0 for any other family.
std::uint16_t port_of(const ::sockaddr_storage& a) noexcept;

/// The world rings set up now join (null: none). Used by src/ring/ring.cpp.
std::shared_ptr<sim_kernel> current_sim_kernel() noexcept;

template <class Ready>
bool sim_kernel::wait_until(Ready ready, std::int64_t deadline) {
  for (;;) {
    if (ready())
      return true;
    if (poll_parked(0) > 0) {
      run_due();
      continue;
    }
    const std::int64_t next = next_event_time();
    if (next == INT64_MAX && deadline == INT64_MAX) {
      if (m_failed)
        return false;  // tearing down after a failure: give up the wait, never throw again
      stuck();  // returns only when a parked descriptor made progress
      continue;
    }
    if (next > deadline) {
      advance_to(deadline);
      if (m_now - m_epoch > m_opts.time_limit.count() && !m_failed)
        fail_time_limit();
      run_due();
      return ready();
    }
    advance_to(next);
    if (m_now - m_epoch > m_opts.time_limit.count() && !m_failed)
      fail_time_limit();
    run_due();
  }
}

}  // namespace saturn::ring
