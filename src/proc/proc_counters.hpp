// The process layer's counters behind process_stats (src/proc/proc_stats.cpp).
#pragma once

#include <saturn/detail/atomic.hpp>

#include <cstdint>

namespace saturn::detail {

extern atomic<std::uint64_t> g_supervisor_restarts;
extern atomic<std::uint64_t> g_supervisor_give_ups;
/// Slots [0, n) of the pid table were handed out at some time. Any thread.
std::uint32_t slots_handed_out() noexcept;

}  // namespace saturn::detail
