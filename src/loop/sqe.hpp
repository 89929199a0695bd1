// What every ext::submit_* shares: tagging an SQE with its operation, and the
// out-of-line retry for a full submission queue.
#pragma once

#include <saturn/ext/operation.hpp>
#include <saturn/loop/event_loop.hpp>

#include <cstdint>

#include "ring/ring.hpp"

namespace saturn::detail {

/// The SQE's user_data is the operation: its completion is one indirect call.
inline void tag(io_uring_sqe* sqe, operation* op) { io_uring_sqe_set_data64(sqe, reinterpret_cast<std::uint64_t>(op)); }

/// One more operation in flight on `l` (counted for has_work and shutdown's drain).
inline void count_in_flight(event_loop& l) noexcept { ++loop_internals::in_flight(l); }

/// The SQ was full: flush it, then run the submit function again. Out of line and reached
/// by a tail call, so a submit function's fast path keeps its arguments in registers and
/// saves none (with the flush called inline, every submit paid three pushes and pops):
///
///     io_uring_sqe* sqe = r.try_get_sqe();
///     if (sqe == nullptr) [[unlikely]]
///       return detail::after_flush<&ext::submit_nop>(r, l, op);
template <auto Submit, class... A>
[[gnu::noinline, gnu::cold]] void after_flush(ring::uring& r, event_loop& l, A... a) {
  ++loop_internals::stats(l).sq_full;
  r.make_room();
  Submit(l, a...);
}

}  // namespace saturn::detail
