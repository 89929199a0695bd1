// Reserved user_data values: never valid operation addresses.
#pragma once

#include <cstdint>

namespace saturn::detail {

/// CQE to drop (results of fire-and-forget cancels and linked timeouts, failed MSG_RINGs).
inline constexpr std::uint64_t ud_ignore = 0;
/// A MSG_RING wake-up from another loop: its only job was to end our wait.
inline constexpr std::uint64_t ud_msg_wake = 1;
/// The loop's own eventfd read (its wake-up from other threads), re-armed before a sleep.
inline constexpr std::uint64_t ud_wake_read = 2;
/// Values at or below this are sentinels.
inline constexpr std::uint64_t ud_max_sentinel = 15;

}  // namespace saturn::detail
