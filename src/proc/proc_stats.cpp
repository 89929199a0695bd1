// process_stats: the pid table scanned for live slots, and the supervisors' counters.
#include <saturn/proc/proc_stats.hpp>
#include <saturn/proc/detail/slot_table.hpp>

#include "proc/proc_counters.hpp"

namespace saturn {

namespace detail {
// Rare events (a restart, a give-up): one relaxed atomic add each, never on a hot path.
atomic<std::uint64_t> g_supervisor_restarts{0};
atomic<std::uint64_t> g_supervisor_give_ups{0};
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
  return st;
}

}  // namespace saturn
