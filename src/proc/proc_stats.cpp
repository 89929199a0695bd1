// process_stats: the pid table scanned for live slots, the supervisors' counters and the
// mailbox high-water mark.
#include <saturn/proc/proc_stats.hpp>
#include <saturn/proc/detail/process_promise.hpp>
#include <saturn/proc/detail/slot_table.hpp>

#include "proc/proc_counters.hpp"

namespace saturn {

namespace detail {
// Rare events (a restart, a give-up): one relaxed atomic add each, never on a hot path.
atomic<std::uint64_t> g_supervisor_restarts{0};
atomic<std::uint64_t> g_supervisor_give_ups{0};
atomic<std::uint32_t> g_mailbox_depth_max{0};

void raise_mailbox_depth_max(std::uint32_t depth) noexcept {
  std::uint32_t cur = g_mailbox_depth_max.load(std::memory_order_relaxed);
  // ordering: relaxed; only the maximum matters, nothing is published through it.
  while (depth > cur && !g_mailbox_depth_max.compare_exchange_weak(cur, depth, std::memory_order_relaxed))
    ;
}
}  // namespace detail

proc_stats process_stats() noexcept {
  proc_stats st;
  const std::uint32_t used = detail::slots_handed_out();
  st.slots = used;
  for (std::uint32_t i = 0; i < used; ++i) {
    const detail::slot* s = detail::slot_at(i);
    // ordering: relaxed; a count, not a hand-off of anything the slot points to.
    if (s != nullptr && detail::inbox_payload(s->m_word.load(std::memory_order_relaxed)) != detail::inbox_dead)
      ++st.alive;
  }
  st.supervisor_restarts = detail::g_supervisor_restarts.load(std::memory_order_relaxed);
  st.supervisor_give_ups = detail::g_supervisor_give_ups.load(std::memory_order_relaxed);
  st.mailbox_depth_max = detail::g_mailbox_depth_max.load(std::memory_order_relaxed);
  return st;
}

}  // namespace saturn
