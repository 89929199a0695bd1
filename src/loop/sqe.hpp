// What every event_loop::submit_* shares: tagging an SQE with its operation, and the
// out-of-line retry for a full submission queue.
#pragma once

#include <saturn/loop/event_loop.hpp>

#include <cstdint>

#include "ring/ring.hpp"

namespace saturn {
/// The loop's private members that the submit helpers below touch.
struct loop_access {
  static void note_sq_full(event_loop* l) noexcept { ++l->m_stats.sq_full; }
};
}  // namespace saturn

namespace saturn::detail {

/// The SQE's user_data is the operation: its completion is one indirect call.
inline void tag(io_uring_sqe* sqe, operation* op) { io_uring_sqe_set_data64(sqe, reinterpret_cast<std::uint64_t>(op)); }

/// The SQ was full: flush it, then run the submit function again. Out of line and reached
/// by a tail call, so a submit function's fast path keeps its arguments in registers and
/// saves none (with the flush called inline, every submit paid three pushes and pops):
///
///     io_uring_sqe* sqe = m_ring->try_get_sqe();
///     if (sqe == nullptr) [[unlikely]]
///       return detail::after_flush<&event_loop::submit_nop>(*m_ring, this, op);
template <auto Submit, class... A>
[[gnu::noinline, gnu::cold]] void after_flush(ring::uring& r, event_loop* l, A... a) {
  loop_access::note_sq_full(l);
  r.make_room();
  (l->*Submit)(a...);
}

}  // namespace saturn::detail
