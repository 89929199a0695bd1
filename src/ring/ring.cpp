// Ring setup (flag probing, error messages), SQ flushing under pressure, and the one
// io_uring_enter per loop iteration.
#include "ring/ring.hpp"

#include "ring/faults.hpp"
#include "ring/sim/kernel.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <saturn/config.hpp>
#include <saturn/detail/atomic.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace saturn::ring {
namespace {

constexpr unsigned flag_si = IORING_SETUP_SINGLE_ISSUER;

// IORING_SETUP_NO_SQARRAY (Linux 6.6): the kernel takes SQEs in ring order instead of
// through the SQ index array, one load and bounds check fewer per SQE in the kernel (about
// 3% of a batched NOP's cost on this machine). saturn fills the SQ in ring order anyway.
// Debian's liburing 2.3 predates the flag, so its value is spelled out here.
#ifdef IORING_SETUP_NO_SQARRAY
constexpr unsigned flag_no_sqarray = IORING_SETUP_NO_SQARRAY;
#else
constexpr unsigned flag_no_sqarray = 1U << 16;
#endif

/// Setup flag sets from most to least preferred, each first with NO_SQARRAY. The first the
/// kernel accepts is remembered for the process so later rings skip the failed attempts
/// (a kernel before 6.6 refuses the NO_SQARRAY row and takes the one after it).
struct candidate {
  unsigned flags;
  bool needs_single_issuer;
  bool needs_defer;
};
constexpr unsigned flag_defer = flag_si | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SUBMIT_ALL;
constexpr unsigned flag_coop = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SUBMIT_ALL;
constexpr unsigned flag_tf = IORING_SETUP_TASKRUN_FLAG;
constexpr unsigned flag_ns = flag_no_sqarray;
constexpr candidate k_candidates[] = {
    {flag_ns | flag_defer | flag_tf, true, true},  {flag_defer | flag_tf, true, true},
    {flag_ns | flag_defer, true, true},            {flag_defer, true, true},
    {flag_ns | flag_si | flag_coop, true, false},  {flag_si | flag_coop, true, false},
    {flag_ns | flag_coop, false, false},           {flag_coop, false, false},
    {flag_ns | IORING_SETUP_SUBMIT_ALL, false, false}, {IORING_SETUP_SUBMIT_ALL, false, false},
    {flag_ns, false, false},                       {0, false, false},
};
constexpr int k_candidate_count = sizeof(k_candidates) / sizeof(k_candidates[0]);

// ordering: relaxed is enough, the value is only a hint of where to start probing.
saturn::detail::atomic<int> g_first_candidate{0};
/// Sets a ring up with NO_SQARRAY (in p.flags). liburing 2.3's io_uring_queue_init_params
/// would fill the SQ index array, which such a ring does not have (its offset is 0, the SQ
/// head), so this path makes the ring with the raw setup call and maps it with
/// io_uring_queue_mmap, which only maps. Returns 0 or -errno.
int setup_without_sqarray(unsigned entries, io_uring_params& p, io_uring& ring) {
  const int fd = io_uring_setup(entries, &p);
  if (fd < 0)
    return fd;
  const int r = io_uring_queue_mmap(fd, &p, &ring);
  if (r != 0) {
    ::close(fd);
    return r;
  }
  ring.features = p.features;
  return 0;
}

std::string read_sysctl(const char* path) {
  std::ifstream in(path);
  std::string value;
  if (!(in >> value))
    return "";
  return value;
}

}  // namespace

std::string describe_setup_error(int err, unsigned entries) {
  std::string msg = "saturn: io_uring_setup(" + std::to_string(entries) + " entries) failed: " +
                    std::strerror(err) + ". ";
  switch (err) {
    case ENOSYS:
      msg += "The kernel has no io_uring (built without CONFIG_IO_URING) or a seccomp filter blocks the "
             "io_uring syscalls (Docker's default profile does). Run on Linux >= 5.19 with io_uring enabled, "
             "or start the container with a seccomp profile that allows io_uring_setup, io_uring_enter and "
             "io_uring_register.";
      break;
    case EPERM:
    case EACCES: {
      std::string disabled = read_sysctl("/proc/sys/kernel/io_uring_disabled");
      msg += "io_uring is not permitted for this process";
      if (!disabled.empty())
        msg += " (sysctl kernel.io_uring_disabled = " + disabled + ")";
      msg += ". Set it to 0 (`sysctl -w kernel.io_uring_disabled=0`), or with 1 add the user to the group in "
             "kernel.io_uring_group; a seccomp or LSM policy may also deny it.";
      break;
    }
    case ENOMEM: {
      rlimit rl{};
      getrlimit(RLIMIT_MEMLOCK, &rl);
      msg += "The kernel could not allocate the ring. On kernels before 5.12 ring memory counts against "
             "RLIMIT_MEMLOCK (now " +
             (rl.rlim_cur == RLIM_INFINITY ? std::string("unlimited") : std::to_string(rl.rlim_cur / 1024) + " KiB") +
             "): raise it (`ulimit -l`, or LimitMEMLOCK= in a systemd unit) or ask for fewer entries.";
      break;
    }
    case EMFILE:
    case ENFILE:
      msg += "The process (EMFILE) or the system (ENFILE) is out of file descriptors; raise RLIMIT_NOFILE "
             "(`ulimit -n`) or close descriptors.";
      break;
    case EINVAL:
      msg += "The kernel rejected every flag set saturn tried, down to none: it is too old for saturn "
             "(Linux >= 5.19 is needed) or the entry count is out of range.";
      break;
    default:
      msg += "Unexpected error from io_uring_setup.";
  }
  return msg;
}

uring::uring(const setup_options& opts) {
  // At least 2: a linked pair (operation + LINK_TIMEOUT) must fit in one submission.
  const unsigned entries = opts.entries == 0 ? 256 : (opts.entries < 2 ? 2 : opts.entries);
  std::shared_ptr<testing::fault_state> faults = testing::current_fault_state();
  if (faults && faults->setup_failures_left.fetch_sub(1) > 0) {
    faults->stats.setup_failures.fetch_add(1);
    const int err = faults->plan.setup_error;
    throw std::system_error(err, std::system_category(), describe_setup_error(err, entries));
  }
  if (std::shared_ptr<sim_kernel> sim = config::simulation ? current_sim_kernel() : nullptr) {
    setup_simulated(std::move(sim), entries, opts.cq_entries != 0 ? opts.cq_entries : entries * 4);
    if (faults)
      m_faults = std::make_unique<ring_faults>(std::move(faults));
    m_hooked = true;
    return;
  }
  int result = -EINVAL;
  int chosen = -1;
  for (int i = g_first_candidate.load(std::memory_order_relaxed); i < k_candidate_count; ++i) {
    const candidate& c = k_candidates[i];
    if (c.needs_single_issuer && !opts.single_issuer)
      continue;
    if (c.needs_defer && !opts.defer_taskrun)
      continue;
    io_uring_params p{};
    p.flags = c.flags | IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
    p.cq_entries = opts.cq_entries != 0 ? opts.cq_entries : entries * 4;
    if (p.cq_entries < entries)
      p.cq_entries = entries;  // the kernel rejects a CQ smaller than the SQ
    result = (c.flags & flag_ns) != 0 ? setup_without_sqarray(entries, p, m_ring)
                                      : io_uring_queue_init_params(entries, &m_ring, &p);
    if (result == 0) {
      chosen = i;
      m_features.single_issuer = (c.flags & flag_si) != 0;
      m_features.defer_taskrun = (c.flags & IORING_SETUP_DEFER_TASKRUN) != 0;
      m_features.coop_taskrun = (c.flags & IORING_SETUP_COOP_TASKRUN) != 0;
      m_features.taskrun_flag = (c.flags & IORING_SETUP_TASKRUN_FLAG) != 0;
      m_features.no_sqarray = (c.flags & flag_ns) != 0;
      m_features.ext_arg = (p.features & IORING_FEAT_EXT_ARG) != 0;
      m_features.nodrop = (p.features & IORING_FEAT_NODROP) != 0;
      m_features.cqe_skip = (p.features & IORING_FEAT_CQE_SKIP) != 0;
      break;
    }
    if (result != -EINVAL)
      break;  // a real failure, not an unknown flag: report it
  }
  if (result != 0)
    throw std::system_error(-result, std::system_category(), describe_setup_error(-result, entries));
  // try_get_sqe() indexes the SQ without liburing's SQE128/SQPOLL checks; no candidate
  // asks for either, and this keeps it that way.
  if ((m_ring.flags & (IORING_SETUP_SQPOLL | IORING_SETUP_SQE128)) != 0) {
    io_uring_queue_exit(&m_ring);
    throw std::logic_error("saturn: ring set up with SQPOLL or SQE128, which try_get_sqe() does not handle");
  }
  // Remember where probing succeeded (only for the full-preference path, so a ring asked
  // for without DEFER does not stop later rings from getting it).
  if (opts.single_issuer && opts.defer_taskrun)
    g_first_candidate.store(chosen, std::memory_order_relaxed);

  std::unique_ptr<io_uring_probe, void (*)(io_uring_probe*)> probe(io_uring_get_probe_ring(&m_ring),
                                                                   io_uring_free_probe);
  // The probe reports up to the kernel's last opcode (liburing asks for 256 slots), so
  // opcodes newer than liburing's enum (op_waitid) are probed too.
  m_supported.assign(probed_opcodes, false);
  if (probe) {
    for (int op = 0; op < probed_opcodes; ++op)
      m_supported[static_cast<unsigned>(op)] = io_uring_opcode_supported(probe.get(), op) != 0;
  }
  m_features.msg_ring = supports(IORING_OP_MSG_RING);
  m_features.registered_fd = io_uring_register_ring_fd(&m_ring) == 1;
  if (faults)
    m_faults = std::make_unique<ring_faults>(std::move(faults));
  m_hooked = m_faults != nullptr;
}

void uring::setup_simulated(std::shared_ptr<sim_kernel> sim, unsigned entries, unsigned cq_entries) {
  m_sim = std::make_unique<sim_ring>(std::move(sim), m_ring, entries, cq_entries);
  // What the simulated kernel offers: the most-preferred setup, and every opcode saturn uses.
  m_features.single_issuer = true;
  m_features.defer_taskrun = true;
  m_features.taskrun_flag = true;
  m_features.no_sqarray = true;
  m_features.ext_arg = true;
  m_features.nodrop = true;
  m_features.cqe_skip = true;
  m_features.msg_ring = true;
  m_supported.assign(probed_opcodes, true);
}

uring::~uring() {
  if (m_sim)
    m_sim.reset();
  else
    io_uring_queue_exit(&m_ring);
}

int uring::hooked_submit() {
  if (m_faults)
    apply_faults();
  if (m_sim)
    return m_sim->submit();
  if (m_features.taskrun_flag)
    return io_uring_submit(&m_ring);
  return io_uring_submit_and_get_events(&m_ring);
}

int uring::register_buf_ring(io_uring_buf_reg& reg) {
  if (m_sim)
    return m_sim->register_buf_ring(reg);
  return io_uring_register_buf_ring(&m_ring, &reg, 0);
}

int uring::unregister_buf_ring(unsigned group) noexcept {
  if (m_sim)
    return m_sim->unregister_buf_ring(group);
  return io_uring_unregister_buf_ring(&m_ring, static_cast<int>(group));
}

int uring::register_buffers(const ::iovec* iov, unsigned count) {
  if (m_sim)
    return 0;  // the simulation reads and writes through the addresses themselves
  io_uring_unregister_buffers(&m_ring);
  return io_uring_register_buffers(&m_ring, iov, count);
}

void uring::unregister_buffers() noexcept {
  if (!m_sim)
    io_uring_unregister_buffers(&m_ring);
}

io_uring_sqe* uring::get_sqe_slow() {
  for (;;) {
    make_room();
    if (io_uring_sqe* sqe = try_get_sqe())
      return sqe;
  }
}

void uring::make_room() {
  // The SQ is full: hand it to the kernel. Under CQ overflow the kernel may refuse
  // (-EBUSY/-EAGAIN); then copy the ready CQEs aside (no completion runs re-entrantly) and
  // let it flush its overflow list into the CQ, and try again.
  if (m_sim) {
    hooked_submit();  // the simulated kernel takes every SQE at once
    return;
  }
  for (int attempt = 0; attempt < 1'000'000; ++attempt) {
    if (m_faults)
      apply_faults();
    int r = io_uring_submit(&m_ring);
    if (r > 0 || (r == 0 && io_uring_sq_ready(&m_ring) == 0))
      return;
    if (r == 0 || r == -EINTR || r == -EBUSY || r == -EAGAIN) {
      copy_aside();
      io_uring_get_events(&m_ring);
      copy_aside();
      continue;
    }
    throw std::system_error(-r, std::system_category(), "saturn: io_uring_enter while flushing a full submission queue");
  }
  throw std::system_error(EBUSY, std::system_category(),
                          "saturn: the kernel accepted no submission after 1,000,000 attempts");
}

io_uring_sqe* uring::get_linked_sqe() {
  if (io_uring_sq_space_left(&m_ring) == 0) {
    // lifetime: the head SQE has not been seen by the kernel yet (it is at the tail), so
    // it can be copied and taken back before the flush.
    io_uring_sqe saved = *m_last;
    --m_ring.sq.sqe_tail;
    while (io_uring_sq_space_left(&m_ring) < 2)
      make_room();
    io_uring_sqe* head = try_get_sqe();  // room made above: never null; sets m_last
    *head = saved;
  }
  m_last->flags |= IOSQE_IO_LINK;
  return get_sqe();
}

void uring::copy_aside() {
  unsigned head;
  unsigned n = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&m_ring, head, cqe) {
    m_copied.push_back(cqe_copy{cqe->user_data, cqe->res, cqe->flags});
    ++n;
  }
  io_uring_cq_advance(&m_ring, n);
}

int uring::enter(unsigned wait_nr, std::int64_t timeout_ns) {
  if (m_hooked) [[unlikely]] {
    if (m_faults)
      apply_faults();
    if (m_sim)
      return m_sim->enter(wait_nr, timeout_ns);
  }
  if (timeout_ns < 0)
    return io_uring_submit_and_wait(&m_ring, wait_nr);
  __kernel_timespec ts{};
  ts.tv_sec = timeout_ns / 1'000'000'000;
  ts.tv_nsec = timeout_ns % 1'000'000'000;
  io_uring_cqe* cqe = nullptr;
  return io_uring_submit_and_wait_timeout(&m_ring, &cqe, wait_nr, &ts, nullptr);
}

void uring::apply_faults() noexcept { m_faults->on_submit(m_ring, m_ring.sq.sqe_head, m_ring.sq.sqe_tail); }

int uring::fault_result(std::uint64_t user_data, int res) noexcept { return m_faults->on_cqe(user_data, res); }

void uring::exempt_from_faults(std::uint64_t user_data) noexcept {
  if (m_faults)
    m_faults->exempt(user_data);
}

}  // namespace saturn::ring
