// The only header that includes liburing (docs/contributing.md, Layers, rule 1). Private to src/.
//
// `uring` is one io_uring instance owned by one thread (the loop's). It hides three
// things the layers above must never see:
//   * setup: the flags are probed once per process (SINGLE_ISSUER|DEFER_TASKRUN, then
//     SINGLE_ISSUER|COOP_TASKRUN, then none, each with NO_SQARRAY first) and a failure
//     names its cause and fix;
//   * SQE acquisition never fails: a full SQ is flushed to the kernel and retried, and if
//     the kernel pushes back (-EBUSY/-EAGAIN while the CQ overflows) the CQEs are copied
//     aside (not dispatched, so no callback runs re-entrantly) and the flush retried;
//   * CQEs are reaped in batches (the head handed back before each completion runs, so
//     completions may submit and even flush); copied-aside CQEs are delivered first, in order.
#pragma once

#include <liburing.h>

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace saturn::ring {

class ring_faults;
class sim_ring;
class sim_kernel;

/// IORING_OP_WAITID (Linux 6.7): waitid(2) as a ring operation. liburing 2.3's enum stops
/// before it (its IORING_OP_LAST is 48), so the number is the kernel uapi's own: after
/// SENDMSG_ZC (48) and READ_MULTISHOT (49). The SQE layout (io_uring/waitid.c,
/// io_waitid_prep): len = idtype, fd = id, file_index = options, addr2 = siginfo_t*,
/// and addr, buf_index, addr3 and the op-flags word must be zero.
inline constexpr int op_waitid = 50;
/// How many opcodes the setup probe asks about: liburing's own and the ones above.
inline constexpr int probed_opcodes = IORING_OP_LAST > op_waitid ? IORING_OP_LAST : op_waitid + 1;

/// What the kernel gave us, probed at setup. Read-only after construction.
struct features {
  bool single_issuer = false;
  bool defer_taskrun = false;
  bool coop_taskrun = false;
  bool taskrun_flag = false;  ///< the kernel flags pending completion work (IORING_SQ_TASKRUN)
  bool ext_arg = false;       ///< timeout on the wait itself (IORING_FEAT_EXT_ARG)
  bool nodrop = false;        ///< CQ overflow is kept, not dropped (IORING_FEAT_NODROP)
  bool cqe_skip = false;      ///< IOSQE_CQE_SKIP_SUCCESS
  bool msg_ring = false;      ///< IORING_OP_MSG_RING
  bool registered_fd = false; ///< io_uring_register_ring_fd succeeded
  bool no_sqarray = false;    ///< SQ without the index array (IORING_SETUP_NO_SQARRAY, 6.6+)
};

/// How to set a ring up.
struct setup_options {
  unsigned entries = 256;      ///< SQ depth (rounded up to a power of two by the kernel)
  unsigned cq_entries = 0;     ///< 0: 4 × entries
  bool single_issuer = true;   ///< only the creating thread submits (the loop's contract)
  bool defer_taskrun = true;   ///< prefer DEFER_TASKRUN when single_issuer
};

/// A CQE copied out of the ring while the SQ had to be flushed under CQ pressure.
struct cqe_copy {
  std::uint64_t user_data;
  std::int32_t res;
  std::uint32_t flags;
};

/// Builds the message for a failed io_uring_setup: what failed, the likely cause on this
/// machine, and what to do. Exposed for tests.
std::string describe_setup_error(int err, unsigned entries);

/// One io_uring. Threading: owned by one thread; every member is called on it (the ring
/// is set up SINGLE_ISSUER when the kernel has it). Not copyable, not movable.
class uring {
 public:
  /// Sets the ring up. Throws std::system_error whose what() names the cause and fix.
  explicit uring(const setup_options& opts);
  ~uring();
  uring(const uring&) = delete;
  uring& operator=(const uring&) = delete;

  /// A free SQE (the prep_* call fills every field), or null when the SQ is full: then make_room() and ask again. Lets a
  /// submit function keep its slow path out of line (no register saves on the fast path).
  ///
  /// liburing's io_uring_get_sqe tests the ring's SQE128 and SQPOLL flags on every call;
  /// this ring never sets either (the constructor checks), so the hot path is one load of
  /// the kernel's head, one compare and the slot's address: about half the instructions,
  /// on a path every operation takes.
  io_uring_sqe* try_get_sqe() {
    io_uring_sq& sq = m_ring.sq;
    const unsigned tail = sq.sqe_tail;
    // ordering: relaxed; without SQPOLL the kernel moves the head only inside our own
    // io_uring_enter, so there is nothing to synchronise with (liburing reads it the same way).
    if (tail - __atomic_load_n(sq.khead, __ATOMIC_RELAXED) >= sq.ring_entries) [[unlikely]]
      return nullptr;
    sq.sqe_tail = tail + 1;
    io_uring_sqe* sqe = sq.sqes + (tail & sq.ring_mask);
    if (sqe == nullptr)
      __builtin_unreachable();  // spares the caller its second null test
    m_last = sqe;
    return sqe;
  }

  /// A zeroed SQE, never null (flushes the SQ when it is full).
  io_uring_sqe* get_sqe() {
    io_uring_sqe* sqe = try_get_sqe();
    if (sqe == nullptr) [[unlikely]]
      sqe = get_sqe_slow();
    return sqe;
  }

  /// Hands a full SQ to the kernel. Under CQ overflow the kernel may refuse; then the
  /// ready CQEs are copied aside (delivered first at the next reap) and it tries again.
  [[gnu::cold]] void make_room();

  /// An SQE that directly follows the last one handed out, marking that one
  /// IOSQE_IO_LINK. If the SQ is full, the last SQE is taken back, the rest flushed, and
  /// it is re-queued first, so a flush never splits the link.
  io_uring_sqe* get_linked_sqe();

  /// SQEs prepared but not yet handed to the kernel.
  unsigned pending() const { return io_uring_sq_ready(&m_ring); }

  /// One io_uring_enter: submits what is pending and, when `wait_nr` > 0, waits until
  /// that many CQEs are ready or `timeout_ns` (>= 0) passes. Returns the number submitted
  /// or -errno (-ETIME on timeout and -EINTR are normal here).
  int enter(unsigned wait_nr, std::int64_t timeout_ns);

  /// Submits pending SQEs and flushes deferred completions into the CQ without waiting.
  /// With IORING_SETUP_TASKRUN_FLAG the kernel says in the SQ flags when completion work
  /// (or a CQ overflow) is pending, and liburing's plain submit asks for GETEVENTS only
  /// then: an enter that only submits skips the kernel's completion-wait path, and with
  /// nothing to submit and nothing pending there is no syscall at all.
  int submit_and_get_events() {
    if (m_hooked) [[unlikely]]
      return hooked_submit();
    if (m_features.taskrun_flag) [[likely]]
      return io_uring_submit(&m_ring);
    return io_uring_submit_and_get_events(&m_ring);
  }

  /// Calls `fn(user_data, res, flags)` for every ready CQE (copied-aside ones first) and
  /// returns how many were seen. `fn` may prepare new SQEs, even flush the SQ: each CQE is
  /// copied out and its slot handed back to the kernel before `fn` runs, so a flush that
  /// copies CQEs aside never sees one twice.
  template <class Fn>
  unsigned reap(Fn&& fn) {
    if (m_faults) [[unlikely]] {
      auto substituted = [this, &fn](std::uint64_t ud, int res, unsigned flags) { fn(ud, fault_result(ud, res), flags); };
      return reap_each(substituted);
    }
    return reap_each(fn);
  }

  /// True when CQEs (or copied-aside CQEs) are ready to reap.
  bool has_completions() const { return io_uring_cq_ready(&m_ring) != 0 || !m_copied.empty(); }

  /// True when the kernel holds CQEs it could not place in the CQ ring.
  bool cq_overflowed() const { return io_uring_cq_has_overflow(&m_ring); }

  /// True when the kernel supports `opcode` (probed at setup).
  bool supports(int opcode) const {
    return opcode >= 0 && opcode < static_cast<int>(m_supported.size()) && m_supported[static_cast<unsigned>(opcode)];
  }

  const features& feature_set() const { return m_features; }
  unsigned sq_entries() const { return m_ring.sq.ring_entries; }
  unsigned cq_entries() const { return m_ring.cq.ring_entries; }
  /// The real ring fd (for IORING_OP_MSG_RING from another ring).
  int fd() const { return m_ring.ring_fd; }
  io_uring* raw() { return &m_ring; }

  /// Under fault injection (saturn/testing/fault_injection.hpp): never fault the
  /// operation with this user_data (the loop's own wake read).
  void exempt_from_faults(std::uint64_t user_data) noexcept;

  /// Registers a provided-buffer ring (io_uring_register_buf_ring). Returns 0 or -errno.
  int register_buf_ring(io_uring_buf_reg& reg);
  /// Unregisters provided-buffer group `group`. Returns 0 or -errno.
  int unregister_buf_ring(unsigned group) noexcept;
  /// Registers fixed buffers, replacing any earlier set. Returns 0 or -errno.
  int register_buffers(const ::iovec* iov, unsigned count);
  void unregister_buffers() noexcept;
  /// True when the ring is simulated (saturn/sim/world.hpp).
  bool simulated() const noexcept { return m_sim != nullptr; }

 private:
  io_uring_sqe* get_sqe_slow();
  void setup_simulated(std::shared_ptr<sim_kernel> sim, unsigned entries, unsigned cq_entries);
  /// submit_and_get_events under fault injection or simulation.
  int hooked_submit();
  /// Lets the fault injector see the SQEs about to be submitted.
  void apply_faults() noexcept;
  /// reap()'s loop: every ready CQE (copied-aside ones first) to `fn`.
  template <class Fn>
  unsigned reap_each(Fn& fn) {
    unsigned n = 0;
    if (!m_copied.empty()) [[unlikely]]
      n += drain_copied(fn);
    // The ring's geometry never changes after setup: held in locals, it stays in
    // registers across fn (an opaque call) instead of being re-read from m_ring.
    unsigned* const khead = m_ring.cq.khead;
    const unsigned* const ktail = m_ring.cq.ktail;
    const io_uring_cqe* const cqes = m_ring.cq.cqes;
    const unsigned mask = m_ring.cq.ring_mask;
    // ordering: acquire pairs with the kernel's release of the tail (CQE contents visible).
    unsigned tail = io_uring_smp_load_acquire(ktail);
    for (;;) {
      // Re-read each step (only this thread writes it): fn may reap re-entrantly (e.g. a
      // shutdown from a completion) and move the head on.
      unsigned head = *khead;
      // A nested reap may have moved the head past our snapshot of the tail: re-read it.
      if (static_cast<int>(tail - head) <= 0) {
        tail = io_uring_smp_load_acquire(ktail);
        if (head == tail)
          break;
      }
      const io_uring_cqe& cqe = cqes[head & mask];
      const std::uint64_t ud = cqe.user_data;
      const std::int32_t res = cqe.res;
      const std::uint32_t flags = cqe.flags;
      // ordering: release hands the slot back only after it was read.
      io_uring_smp_store_release(khead, head + 1);
      fn(ud, res, flags);
      ++n;
    }
    return n;
  }
  int fault_result(std::uint64_t user_data, int res) noexcept;
  void copy_aside();
  template <class Fn>
  unsigned drain_copied(Fn& fn) {
    // lifetime: swap out first, fn may cause more copies (which go to a fresh vector).
    std::vector<cqe_copy> copied;
    copied.swap(m_copied);
    for (const cqe_copy& c : copied)
      fn(c.user_data, c.res, c.flags);
    return static_cast<unsigned>(copied.size());
  }

  io_uring m_ring{};
  io_uring_sqe* m_last = nullptr;
  features m_features;
  std::vector<bool> m_supported;
  std::vector<cqe_copy> m_copied;
  std::unique_ptr<ring_faults> m_faults;  // null unless a testing::fault_scope was live at setup
  std::unique_ptr<sim_ring> m_sim;        // null unless a sim::world was live at setup
  bool m_hooked = false;                  // m_faults or m_sim: one test on the hot path
};

}  // namespace saturn::ring
