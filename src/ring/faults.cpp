// Fault injection: the plan's global installation and the per-ring SQE rewriting.
#include "ring/faults.hpp"

#include <mutex>
#include <stdexcept>

#include "loop/user_data.hpp"

namespace saturn::testing {
namespace {
std::mutex g_lock;
std::shared_ptr<fault_state> g_state;  // guarded by g_lock
}  // namespace

std::uint64_t fault_stats::total_errors() const noexcept {
  std::uint64_t n = 0;
  for (const auto& e : errors)
    n += e.load();
  return n;
}

std::uint64_t fault_stats::total_shorts() const noexcept {
  std::uint64_t n = 0;
  for (const auto& s : shorts)
    n += s.load();
  return n;
}

fault_scope::fault_scope(fault_plan plan) : m_state(std::make_shared<fault_state>()) {
  m_state->plan = std::move(plan);
  m_state->setup_failures_left.store(m_state->plan.setup_error != 0 ? m_state->plan.setup_failures : 0);
  std::lock_guard lock(g_lock);
  if (g_state)
    throw std::logic_error("saturn::testing::fault_scope: another scope is already installed (scopes do not nest)");
  g_state = m_state;
}

fault_scope::~fault_scope() {
  std::lock_guard lock(g_lock);
  g_state.reset();
}

std::shared_ptr<fault_state> current_fault_state() noexcept {
  std::lock_guard lock(g_lock);
  return g_state;
}

}  // namespace saturn::testing

namespace saturn::ring {
namespace {

using testing::op_kind;

/// The kind a rule can target, or count_ for operations never faulted.
op_kind kind_of(unsigned opcode) noexcept {
  switch (opcode) {
    case IORING_OP_NOP: return op_kind::nop;
    case IORING_OP_READ: case IORING_OP_READ_FIXED: case IORING_OP_READV: return op_kind::read;
    case IORING_OP_WRITE: case IORING_OP_WRITE_FIXED: case IORING_OP_WRITEV: return op_kind::write;
    case IORING_OP_RECV: case IORING_OP_RECVMSG: return op_kind::recv;
    case IORING_OP_SEND: case IORING_OP_SENDMSG: case IORING_OP_SEND_ZC: return op_kind::send;
    case IORING_OP_ACCEPT: return op_kind::accept;
    case IORING_OP_CONNECT: return op_kind::connect;
    case IORING_OP_OPENAT: case IORING_OP_OPENAT2: return op_kind::open;
    case IORING_OP_CLOSE: return op_kind::close;
    case IORING_OP_STATX: return op_kind::statx;
    case IORING_OP_FSYNC: return op_kind::fsync;
    case IORING_OP_TIMEOUT: return op_kind::timeout;
    default: return op_kind::count_;  // cancels, linked timeouts, MSG_RING, polls: the loop's machinery
  }
}

/// Cuts the operation's length so the kernel moves fewer bytes; false if it cannot be cut.
bool make_short(io_uring_sqe* sqe, std::mt19937_64& rng) noexcept {
  switch (sqe->opcode) {
    case IORING_OP_READV:
    case IORING_OP_WRITEV:
      if (sqe->len <= 1)
        return false;
      sqe->len = 1;  // the first iovec only: a legitimate short vectored transfer
      return true;
    case IORING_OP_RECVMSG:
    case IORING_OP_SENDMSG:
      return false;  // lengths live in the user's msghdr, which is not ours to edit
    default:
      if ((sqe->flags & IOSQE_BUFFER_SELECT) != 0 || sqe->len <= 1)
        return false;
      sqe->len = 1 + static_cast<unsigned>(rng() % (sqe->len - 1));
      return true;
  }
}

}  // namespace

ring_faults::ring_faults(std::shared_ptr<testing::fault_state> state)
    : m_state(std::move(state)), m_rng(m_state->plan.seed * 0x9E3779B97F4A7C15ull + m_state->rings.fetch_add(1)) {}

void ring_faults::on_submit(io_uring& ring, unsigned from, unsigned to) noexcept {
  for (unsigned i = from; i != to; ++i)
    inspect(&ring.sq.sqes[i & ring.sq.ring_mask]);
}

void ring_faults::inspect(io_uring_sqe* sqe) noexcept {
  const std::uint64_t ud = sqe->user_data;
  const op_kind kind = kind_of(sqe->opcode);
  if (kind == op_kind::count_ || ud <= detail::ud_max_sentinel || ud == m_exempt)
    return;
  m_state->stats.seen.fetch_add(1, std::memory_order_relaxed);
  if (m_seen++ < m_state->plan.skip_first)
    return;
  std::uniform_real_distribution<double> dice(0.0, 1.0);
  for (const testing::fault_rule& rule : m_state->plan.rules) {
    if (rule.kind != kind || dice(m_rng) >= rule.probability)
      continue;
    // The kernel returns ENOBUFS only to an operation that picks a provided buffer.
    if (rule.error == ENOBUFS && (sqe->flags & IOSQE_BUFFER_SELECT) == 0)
      continue;
    const auto k = static_cast<std::size_t>(kind);
    if (rule.error == 0) {
      if (make_short(sqe, m_rng)) {
        m_state->stats.shorts[k].fetch_add(1, std::memory_order_relaxed);
        return;
      }
      continue;
    }
    // The operation becomes a NOP with the same user_data and link flags: it touches no
    // fd and no buffer, and its CQE result is replaced by the error (on_cqe).
    const std::uint8_t keep = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK | IOSQE_IO_DRAIN);
    io_uring_prep_nop(sqe);
    sqe->flags = keep;
    sqe->user_data = ud;
    m_failed[ud] = -rule.error;
    m_state->stats.errors[k].fetch_add(1, std::memory_order_relaxed);
    return;
  }
}

int ring_faults::on_cqe_slow(std::uint64_t user_data, int res) noexcept {
  auto it = m_failed.find(user_data);
  if (it == m_failed.end())
    return res;
  res = it->second;
  m_failed.erase(it);
  return res;
}

}  // namespace saturn::ring
