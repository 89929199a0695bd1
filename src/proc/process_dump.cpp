// The process layer's part of the task dump (saturn/sched/task_dump.hpp): what a paused
// process body holds. The dumper calls read_process while every worker of the process's
// pool is paused, so the process is not running: its local message list (touched only by
// the process) and its inbox's node chain (below the head a sender pushes onto; only the
// process pulls it) hold still while they are counted. The links and monitors are read
// under the slot's spin lock, which no paused worker holds (it is taken only inside
// single calls). Installed by the first slot_acquire (src/proc/slot_table.cpp).
#include <saturn/proc/detail/process_promise.hpp>
#include <saturn/proc/detail/signals.hpp>
#include "proc/process_dump.hpp"

#include <mutex>

namespace saturn::detail {

void read_process(const promise_base* pb, std::uint32_t mailbox_limit, process_facts& f) noexcept {
  const auto* p = static_cast<const process_promise_base*>(pb);
  f.valid = true;
  f.index = p->m_self.index;
  f.generation = p->m_self.generation;
  f.in_receive = p->m_recv != nullptr;
  f.trap_exits = p->m_trap;
  std::uint32_t n = 0;
  // Taken from the inbox, not yet received: a circular list kept by its newest node.
  if (p->m_tail != nullptr) {
    const node_base* it = p->m_tail->m_next;
    for (;;) {
      if (n == mailbox_limit) {
        f.mailbox_capped = true;
        break;
      }
      ++n;
      if (it == p->m_tail)
        break;
      it = it->m_next;
    }
  }
  slot* s = p->slot_of();
  // ordering: acquire pairs with the senders' release CAS: the pushed nodes' links are visible.
  const std::uint64_t w = s->m_word.load(std::memory_order_acquire);
  if (inbox_has_nodes(w) && !f.mailbox_capped) {
    for (const node_base* it = reinterpret_cast<const node_base*>(inbox_payload(w)); it != nullptr; it = it->m_next) {
      if (n == mailbox_limit) {
        f.mailbox_capped = true;
        break;
      }
      ++n;
    }
  }
  f.mailbox = n;
  // ordering: acquire pairs with aux_of's release publication of a new aux.
  if (slot_aux* a = s->m_aux.load(std::memory_order_acquire)) {
    std::lock_guard lock(a->m_lock);
    f.links = static_cast<std::uint32_t>(a->m_links.size());
    f.monitors = static_cast<std::uint32_t>(a->m_monitors.size());
    f.capacity = a->m_capacity;
  }
}

}  // namespace saturn::detail
