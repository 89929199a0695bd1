// The simulated kernel: events in virtual time, timeouts, linked timeouts, cancellation,
// NOP and MSG_RING (see include/saturn/sim/world.hpp). Operations on real descriptors are
// in real_ops.cpp.
#include "ring/sim/kernel.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include <saturn/loop/clock.hpp>

namespace saturn::ring {

// ---- PRNG

namespace {
std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

/// The virtual clock starts here, not at 0 (0 means "no simulation" to saturn::clock).
constexpr std::int64_t k_epoch_ns = 1'000'000'000'000;  // 1000 s

const char* opcode_name(unsigned op) noexcept {
  switch (op) {
    case IORING_OP_NOP: return "NOP";
    case IORING_OP_READV: return "READV";
    case IORING_OP_WRITEV: return "WRITEV";
    case IORING_OP_FSYNC: return "FSYNC";
    case IORING_OP_READ_FIXED: return "READ_FIXED";
    case IORING_OP_WRITE_FIXED: return "WRITE_FIXED";
    case IORING_OP_POLL_ADD: return "POLL_ADD";
    case IORING_OP_SENDMSG: return "SENDMSG";
    case IORING_OP_RECVMSG: return "RECVMSG";
    case IORING_OP_TIMEOUT: return "TIMEOUT";
    case IORING_OP_ACCEPT: return "ACCEPT";
    case IORING_OP_ASYNC_CANCEL: return "ASYNC_CANCEL";
    case IORING_OP_LINK_TIMEOUT: return "LINK_TIMEOUT";
    case IORING_OP_CONNECT: return "CONNECT";
    case IORING_OP_OPENAT: return "OPENAT";
    case IORING_OP_CLOSE: return "CLOSE";
    case IORING_OP_STATX: return "STATX";
    case IORING_OP_READ: return "READ";
    case IORING_OP_WRITE: return "WRITE";
    case IORING_OP_SEND: return "SEND";
    case IORING_OP_RECV: return "RECV";
    case IORING_OP_OPENAT2: return "OPENAT2";
    case IORING_OP_SHUTDOWN: return "SHUTDOWN";
    case IORING_OP_MSG_RING: return "MSG_RING";
    case IORING_OP_SOCKET: return "SOCKET";
    case IORING_OP_SEND_ZC: return "SEND_ZC";
    default: return "opcode";
  }
}

std::int64_t timespec_ns(std::uint64_t addr) noexcept {
  const auto* ts = reinterpret_cast<const __kernel_timespec*>(addr);
  return ts == nullptr ? 0 : ts->tv_sec * 1'000'000'000 + ts->tv_nsec;
}

/// Opcodes whose result is a new descriptor: the trace records only success, not the number.
bool returns_fd(unsigned op) noexcept {
  return op == IORING_OP_ACCEPT || op == IORING_OP_SOCKET || op == IORING_OP_OPENAT || op == IORING_OP_OPENAT2;
}

/// Opcodes that act on the descriptor in sqe.fd (their completions keep the fd's order).
bool on_descriptor(unsigned op) noexcept {
  switch (op) {
    case IORING_OP_NOP: case IORING_OP_TIMEOUT: case IORING_OP_LINK_TIMEOUT: case IORING_OP_ASYNC_CANCEL:
    case IORING_OP_MSG_RING: case IORING_OP_SOCKET: case IORING_OP_OPENAT: case IORING_OP_OPENAT2:
    case IORING_OP_STATX:
      return false;
    default:
      return true;
  }
}
}  // namespace

sim_prng::sim_prng(std::uint64_t seed) noexcept {
  std::uint64_t x = seed;
  for (auto& s : m_s)
    s = splitmix64(x);
}

std::uint64_t sim_prng::next() noexcept {
  const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
  const std::uint64_t t = m_s[1] << 17;
  m_s[2] ^= m_s[0];
  m_s[3] ^= m_s[1];
  m_s[1] ^= m_s[2];
  m_s[0] ^= m_s[3];
  m_s[2] ^= t;
  m_s[3] = rotl(m_s[3], 45);
  return result;
}

std::uint64_t sim_prng::below(std::uint64_t n) noexcept {
  if (n == 0)
    return 0;
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
}

// ---- the kernel

sim_kernel::sim_kernel(std::uint64_t seed, const sim::options& opts)
    : m_seed(seed), m_opts(opts), m_rng(seed), m_epoch(k_epoch_ns), m_now(k_epoch_ns), m_disk(opts.disk_space),
      m_thread(static_cast<std::uintptr_t>(::syscall(SYS_gettid))) {
  if (m_opts.max_latency < m_opts.min_latency)
    m_opts.max_latency = m_opts.min_latency;
  fold(seed);
}

sim_kernel::~sim_kernel() {
  for (auto& [id, op] : m_ops)
    if (op->pinned_fd >= 0)
      ::close(op->pinned_fd);
  for (auto& [port, queue] : m_accept_queue)
    for (const int fd : queue)
      ::close(fd);
}

bool sim_kernel::on_world_thread() const noexcept {
  return static_cast<std::uintptr_t>(::syscall(SYS_gettid)) == m_thread;
}

void sim_kernel::attach(sim_ring* r) {
  m_rings.push_back(r);
  r->m_serial = ++m_ring_serial;
  r->m_fd = 1'000'000 + static_cast<int>(r->m_serial);
}

void sim_kernel::detach(sim_ring* r) noexcept {
  m_rings.erase(std::remove(m_rings.begin(), m_rings.end(), r), m_rings.end());
  // Its ops can no longer complete anywhere: forget them (the ring's owner cancelled and
  // reaped everything before destroying it; what is left is fire-and-forget).
  for (std::uint64_t id : r->m_live) {
    auto it = m_ops.find(id);
    if (it != m_ops.end())
      forget(it->second.get());
  }
  r->m_live.clear();
}

sim_ring* sim_kernel::ring_by_fd(int fd) const noexcept {
  for (sim_ring* r : m_rings)
    if (r->m_fd == fd)
      return r;
  return nullptr;
}

void sim_kernel::fold(std::uint64_t v) noexcept {
  // FNV-1a over the eight bytes: order-sensitive and cheap.
  for (int i = 0; i < 8; ++i) {
    m_hash ^= (v >> (i * 8)) & 0xff;
    m_hash *= 0x100000001b3ull;
  }
}

std::int64_t sim_kernel::latency() noexcept {
  const std::int64_t lo = m_opts.min_latency.count();
  const std::int64_t hi = m_opts.max_latency.count();
  return lo + static_cast<std::int64_t>(m_rng.below(static_cast<std::uint64_t>(hi - lo) + 1));
}

void sim_kernel::advance_to(std::int64_t t) noexcept {
  if (t > m_now)
    m_now = t;
  // ordering: relaxed; read by saturn::clock on this same thread.
  saturn::detail::g_virtual_now_ns.store(m_now, std::memory_order_relaxed);
}

sim_op* sim_kernel::submit(sim_ring* r, const io_uring_sqe& sqe, sim_op* prev) {
  auto owned = std::make_unique<sim_op>();
  sim_op* op = owned.get();
  op->id = m_next_id++;
  op->ring = r;
  std::memcpy(op->sqe_bytes, &sqe, sizeof op->sqe_bytes);
  m_ops.emplace(op->id, std::move(owned));
  r->m_live.push_back(op->id);
  if (r->m_live.size() > 256 && r->m_live.size() > 2 * m_ops.size()) {
    auto gone = [this](std::uint64_t id) { return m_ops.find(id) == m_ops.end(); };
    r->m_live.erase(std::remove_if(r->m_live.begin(), r->m_live.end(), gone), r->m_live.end());
  }
  start(op, prev);
  return op;
}

void sim_kernel::start(sim_op* op, sim_op* prev) {
  const io_uring_sqe& sqe = op->sqe();
  switch (sqe.opcode) {
    case IORING_OP_NOP:
      schedule(op, 0);
      return;
    case IORING_OP_TIMEOUT: {
      const std::int64_t ns = timespec_ns(sqe.addr);
      op->deadline = (sqe.timeout_flags & IORING_TIMEOUT_ABS) != 0 ? ns : m_now + ns;
      add_event(op->deadline, op, true);
      return;
    }
    case IORING_OP_LINK_TIMEOUT: {
      if (prev == nullptr || (prev->sqe().flags & IOSQE_IO_LINK) == 0) {
        schedule(op, -EINVAL);
        return;
      }
      if (prev->st == sim_op::state::done) {
        schedule(op, -ECANCELED);
        return;
      }
      op->link_target = prev->id;
      prev->link_timeout = op->id;
      const std::int64_t ns = timespec_ns(sqe.addr);
      op->deadline = (sqe.timeout_flags & IORING_TIMEOUT_ABS) != 0 ? ns : m_now + ns;
      add_event(op->deadline, op, true);
      return;
    }
    case IORING_OP_ASYNC_CANCEL:
      start_cancel(op);
      return;
    case IORING_OP_MSG_RING: {
      sim_ring* target = ring_by_fd(sqe.fd);
      if (target == nullptr) {
        schedule(op, -EBADF);
        return;
      }
      post(target, sqe.off, static_cast<int>(sqe.len), 0, IORING_OP_MSG_RING);
      schedule(op, 0);
      return;
    }
    default:
      start_real(op);
  }
}

void sim_kernel::start_cancel(sim_op* op) {
  const io_uring_sqe& sqe = op->sqe();
  const unsigned flags = sqe.cancel_flags;
  const bool any = (flags & IORING_ASYNC_CANCEL_ANY) != 0;
  const bool all = any || (flags & IORING_ASYNC_CANCEL_ALL) != 0;
  const bool by_fd = (flags & IORING_ASYNC_CANCEL_FD) != 0;
  sim_ring* r = op->ring;
  // lifetime: finishing a target erases it (and may finish its linked timeout): work on a
  // copy of the ids, looking each up again.
  std::vector<std::uint64_t> ids;
  ids.reserve(r->m_live.size());
  for (std::uint64_t id : r->m_live)
    if (id != op->id && m_ops.count(id) != 0)
      ids.push_back(id);
  r->m_live.assign(ids.begin(), ids.end());
  r->m_live.push_back(op->id);
  int cancelled = 0;
  int result = -ENOENT;
  for (std::uint64_t id : ids) {
    auto it = m_ops.find(id);
    if (it == m_ops.end())
      continue;
    sim_op* t = it->second.get();
    if (t->sqe().opcode == IORING_OP_ASYNC_CANCEL)
      continue;
    const bool match = any || (by_fd ? t->sqe().fd == sqe.fd && on_descriptor(t->sqe().opcode) : t->sqe().user_data == sqe.addr);
    if (!match)
      continue;
    if (t->st == sim_op::state::waiting) {
      cancel_op(t);
      ++cancelled;
      result = 0;
    } else if (!all) {
      // Decided but not yet delivered: the cancel came too late.
      result = m_rng.chance(m_opts.cancel_already) ? -EALREADY : -ENOENT;
    }
    if (!all)
      break;
  }
  if (all)
    result = cancelled > 0 ? cancelled : -ENOENT;
  schedule(op, result);
}

void sim_kernel::cancel_op(sim_op* op) {
  finish(op, -ECANCELED, 0);
}

void sim_kernel::schedule(sim_op* op, int res, unsigned flags) {
  op->st = sim_op::state::scheduled;
  op->parked = false;
  op->res = res;
  op->cqe_flags = flags;
  std::int64_t t = m_now + latency();
  if (on_descriptor(op->sqe().opcode) && op->sqe().fd >= 0) {
    std::int64_t& last = m_fd_last[op->sqe().fd];
    if (t < last)
      t = last;
    last = t;
  }
  add_event(t, op, false);
}

void sim_kernel::add_event(std::int64_t time, sim_op* op, bool deadline) {
  m_events.push(event{time, m_rng.next(), op->id, op->gen, deadline});
}

std::int64_t sim_kernel::next_event_time() const noexcept {
  return m_events.empty() ? INT64_MAX : m_events.top().time;
}

void sim_kernel::post(sim_ring* r, std::uint64_t user_data, int res, unsigned flags, unsigned opcode) {
  ++m_completions;
  fold(static_cast<std::uint64_t>(m_now - m_epoch));
  fold(r->m_serial);
  fold(opcode);
  fold(returns_fd(opcode) && res >= 0 ? 0 : static_cast<std::uint64_t>(static_cast<std::int64_t>(res)));
  fold(flags);
  r->post(user_data, res, flags);
}

void sim_kernel::finish(sim_op* op, int res, unsigned flags) {
  const bool skip = (op->sqe().flags & IOSQE_CQE_SKIP_SUCCESS) != 0 && res >= 0;
  if (!skip)
    post(op->ring, op->sqe().user_data, res, flags, op->sqe().opcode);
  if ((flags & IORING_CQE_F_MORE) != 0)
    return;  // a multishot op goes on
  op->st = sim_op::state::done;
  const std::uint64_t lt = op->link_timeout;
  forget(op);
  if (lt != 0) {
    auto it = m_ops.find(lt);
    if (it != m_ops.end() && it->second->st == sim_op::state::waiting)
      finish(it->second.get(), -ECANCELED, 0);
  }
}

void sim_kernel::forget(sim_op* op) noexcept {
  if (op->pinned_fd >= 0)
    ::close(op->pinned_fd);
  m_ops.erase(op->id);
}

void sim_kernel::park(sim_op* op) {
  op->parked = true;
  m_parked.push_back(op->id);
  // Only ops on a descriptor pin it (waitid parks with an id, not a file).
  if (op->pinned_fd < 0 && op->park_events != 0 && op->sqe().fd >= 0)
    op->pinned_fd = ::fcntl(op->sqe().fd, F_DUPFD_CLOEXEC, 0);
}

void sim_kernel::step() {
  advance_to(m_now + m_opts.enter_cost.count());
  run_due();
  if (!m_parked.empty() && poll_parked(0) > 0)
    run_due();
}

void sim_kernel::run_due() {
  advance_to(m_now);
  while (!m_events.empty() && m_events.top().time <= m_now) {
    const event e = m_events.top();
    m_events.pop();
    auto it = m_ops.find(e.op_id);
    if (it == m_ops.end())
      continue;
    sim_op* op = it->second.get();
    if (op->gen != e.gen)
      continue;
    if (e.deadline) {
      if (op->st != sim_op::state::waiting)
        continue;
      if (op->sqe().opcode == IORING_OP_LINK_TIMEOUT) {
        // The guarded op is cancelled if it has not been decided; a decided one completes
        // with its own result and then settles this timeout with -ECANCELED.
        auto t = m_ops.find(op->link_target);
        if (t != m_ops.end() && t->second->st != sim_op::state::waiting)
          continue;
        op->link_target = 0;
        finish(op, -ETIME, 0);
        if (t != m_ops.end()) {
          t->second->link_timeout = 0;
          finish(t->second.get(), -ECANCELED, 0);
        }
      } else {
        finish(op, -ETIME, 0);
      }
      continue;
    }
    if (op->st != sim_op::state::scheduled)
      continue;
    if (op->sqe().opcode == IORING_OP_SEND_ZC && op->res >= 0) {
      // A zero-copy send answers twice: the byte count (F_MORE), then the notification.
      post(op->ring, op->sqe().user_data, op->res, IORING_CQE_F_MORE, op->sqe().opcode);
      finish(op, 0, IORING_CQE_F_NOTIF);
      continue;
    }
    const unsigned flags = op->cqe_flags;
    finish(op, op->res, flags);
    if ((flags & IORING_CQE_F_MORE) != 0) {
      // A multishot op stays armed: back to waiting for its descriptor.
      ++op->gen;
      op->st = sim_op::state::waiting;
      park(op);
    }
  }
}

void sim_kernel::stuck() {
  if (m_opts.external_wait.count() > 0 && !m_parked.empty() &&
      poll_parked(static_cast<int>(m_opts.external_wait.count())) > 0) {
    run_due();
    return;
  }
  m_failed = true;
  throw sim::deadlock_error("saturn::sim: deadlock after " + std::to_string((m_now - m_epoch) / 1000) +
                            " us of virtual time (seed " + std::to_string(m_seed) +
                            "): a loop waits for a completion and nothing in the simulated world can produce "
                            "one. " + describe_in_flight());
}

void sim_kernel::fail_time_limit() {
  m_failed = true;
  throw sim::time_limit_error("saturn::sim: the virtual clock passed options::time_limit (" +
                              std::to_string(m_opts.time_limit.count() / 1'000'000) + " ms, seed " +
                              std::to_string(m_seed) + "): a livelock, or a program that never ends. " +
                              describe_in_flight());
}

std::string sim_kernel::describe_in_flight() const {
  std::string s = std::to_string(m_ops.size()) + " operation(s) in flight";
  if (m_ops.empty())
    return s + ".";
  std::vector<const sim_op*> ops;
  for (const auto& [id, op] : m_ops)
    ops.push_back(op.get());
  std::sort(ops.begin(), ops.end(), [](const sim_op* a, const sim_op* b) { return a->id < b->id; });
  s += ":";
  int shown = 0;
  for (const sim_op* op : ops) {
    if (++shown > 12) {
      s += " ...";
      break;
    }
    char buf[96];
    const char* state = op->parked ? ", waiting for the descriptor"
                        : op->st == sim_op::state::scheduled ? ", completing"
                                                              : "";
    std::snprintf(buf, sizeof buf, " %s(fd %d, ring %u%s)", opcode_name(op->sqe().opcode), op->sqe().fd,
                  op->ring->m_serial, state);
    s += buf;
  }
  return s;
}

bool sim_kernel::pick_buffer(sim_ring* r, unsigned bgid, picked_buffer& out) noexcept {
  auto it = r->m_groups.find(bgid);
  if (it == r->m_groups.end())
    return false;
  sim_ring::buf_group& g = it->second;
  const std::uint16_t tail = io_uring_smp_load_acquire(&g.br->tail);
  if (g.head == tail)
    return false;
  const io_uring_buf& b = g.br->bufs[g.head & (g.entries - 1)];
  out.addr = reinterpret_cast<void*>(b.addr);
  out.len = b.len;
  out.bid = b.bid;
  ++g.head;
  return true;
}

}  // namespace saturn::ring
