/// \file
/// `operation`: the node every ring operation is — an object whose address is the SQE's
/// user_data — and `kernel_timespec`, the timespec a timeout SQE points at. For code that
/// submits ring operations itself (saturn/ext/submit*.hpp); a program written against the
/// task or callback tiers never names either.
#pragma once

#include <chrono>
#include <cstdint>

namespace saturn {

/// An operation in flight in the kernel. Its address is the SQE's user_data, and the
/// loop calls `m_complete` with the CQE's result in O(1) — no lookup, no allocation.
///
/// Threading: owned by one loop; `m_complete` runs on that loop's thread.
/// Lifetime: the object (and every buffer the operation names) must stay alive and
/// unmoved until `m_complete` has been called, even when the operation was cancelled —
/// the kernel may write until its CQE arrives. A multishot operation is called once per
/// CQE while the flags carry IORING_CQE_F_MORE.
struct operation {
  /// `res` is the CQE result (>= 0 success, -errno failure); `flags` the CQE flags.
  using complete_fn = void (*)(operation* self, int res, unsigned flags) noexcept;
  complete_fn m_complete = nullptr;
};

/// CQE flag bits an operation's completion may get (checked against liburing in src/loop).
inline constexpr unsigned cqe_f_buffer = 1u << 0;  ///< the CQE carries a buffer id in flags >> 16
inline constexpr unsigned cqe_f_more = 1u << 1;    ///< a multishot operation stays armed
inline constexpr unsigned cqe_f_notif = 1u << 3;   ///< a zero-copy send's buffer-release notification
inline constexpr unsigned cqe_buffer_shift = 16;   ///< buffer id position in the CQE flags

/// Layout-compatible with the kernel's `__kernel_timespec` (checked in src/ring), so an
/// operation can own the timespec its timeout SQE points at. A plain value (any thread);
/// the one a submitted timeout names must stay alive until that operation completes.
struct kernel_timespec {
  std::int64_t tv_sec = 0;
  long long tv_nsec = 0;

  static kernel_timespec from(std::chrono::nanoseconds d) noexcept {
    if (d.count() < 0)
      d = std::chrono::nanoseconds{0};
    return kernel_timespec{d.count() / 1'000'000'000, d.count() % 1'000'000'000};
  }
};

}  // namespace saturn
