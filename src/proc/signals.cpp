// Links, monitors, bounded-mailbox credits and the end of a process. The protocol that
// keeps links and monitors exactly-once is at the top of saturn/proc/detail/signals.hpp.
#include <saturn/detail/atomic.hpp>
#include <saturn/proc/detail/signals.hpp>

#include <algorithm>
#include <mutex>

namespace saturn::detail {

namespace {

atomic<monitor_ref> g_next_ref{1};

std::uint32_t next_generation(std::uint32_t g) noexcept { return g + 1 == 0 ? 1 : g + 1; }

/// True if `p` is alive; the caller holds the aux lock of p's slot (seq_cst: see the
/// protocol in signals.hpp).
bool alive_locked(slot* s, pid p) noexcept { return s->m_gen.load(std::memory_order_seq_cst) == p.generation; }

void push_sys(pid to, node_kind kind, pid from, const exit_reason& reason, monitor_ref ref, std::uint32_t seq) {
  auto* n = new sys_node;
  n->m_kind = kind;
  n->m_seq = seq;
  n->m_from = from;
  n->m_reason = reason;
  n->m_ref = ref;
  if (!inbox_push(to, n))
    delete n;
}

/// Removes `who` from the links of `p`; true if it was there (and p alive).
bool drop_link(pid p, pid who) {
  slot* s = slot_at(p.index);
  if (s == nullptr)
    return false;
  slot_aux* a = s->m_aux.load(std::memory_order_seq_cst);
  if (a == nullptr)
    return false;
  std::lock_guard lock(a->m_lock);
  if (!alive_locked(s, p))
    return false;
  auto it = std::find(a->m_links.begin(), a->m_links.end(), who);
  if (it == a->m_links.end())
    return false;
  *it = a->m_links.back();
  a->m_links.pop_back();
  return true;
}

}  // namespace

slot_aux* aux_of(slot* s) {
  slot_aux* a = s->m_aux.load(std::memory_order_seq_cst);
  if (a != nullptr)
    return a;
  auto* fresh = new slot_aux;
  // ordering: seq_cst, the installing half of the link/end protocol (signals.hpp).
  if (s->m_aux.compare_exchange_strong(a, fresh, std::memory_order_seq_cst))
    return fresh;
  delete fresh;
  return a;
}

void push_exit_signal(pid to, pid from, const exit_reason& reason, bool untrappable) {
  push_sys(to, node_kind::exit_signal, from, reason, 0, untrappable ? exit_untrappable : 0);
}

void push_down(pid watcher, monitor_ref ref, pid from, const exit_reason& reason) {
  push_sys(watcher, node_kind::down, from, reason, ref, 0);
}

void push_timeout(pid to, std::uint32_t seq) { push_sys(to, node_kind::timeout, pid{}, exit_reason{}, 0, seq); }

void link_pids(pid self, pid other) {
  if (self == other)
    return;
  slot* ss = slot_at(self.index);
  slot* so = slot_at(other.index);
  if (ss == nullptr)
    return;
  if (so == nullptr || !other.valid()) {
    push_exit_signal(self, other, exit_reason{exit_kind::noproc, nullptr});
    return;
  }
  slot_aux* as = aux_of(ss);
  slot_aux* ao = aux_of(so);
  // Lock order: lower index first.
  slot_aux* first = self.index < other.index ? as : ao;
  slot_aux* second = self.index < other.index ? ao : as;
  bool other_dead = false;
  {
    std::lock_guard l1(first->m_lock);
    std::lock_guard l2(second->m_lock);
    if (!alive_locked(ss, self))
      return;
    if (!alive_locked(so, other)) {
      other_dead = true;
    } else {
      if (std::find(as->m_links.begin(), as->m_links.end(), other) == as->m_links.end())
        as->m_links.push_back(other);
      if (std::find(ao->m_links.begin(), ao->m_links.end(), self) == ao->m_links.end())
        ao->m_links.push_back(self);
    }
  }
  if (other_dead)
    push_exit_signal(self, other, exit_reason{exit_kind::noproc, nullptr});
}

void unlink_pids(pid self, pid other) noexcept {
  try {
    drop_link(self, other);
    drop_link(other, self);
  } catch (...) {
  }
}

monitor_ref monitor_pid(pid watcher, pid target) {
  const monitor_ref ref = g_next_ref.fetch_add(1, std::memory_order_relaxed);
  slot* s = slot_at(target.index);
  bool dead = s == nullptr || !target.valid();
  if (!dead) {
    slot_aux* a = aux_of(s);
    std::lock_guard lock(a->m_lock);
    if (alive_locked(s, target))
      a->m_monitors.emplace_back(ref, watcher);
    else
      dead = true;
  }
  if (dead)
    push_down(watcher, ref, target, exit_reason{exit_kind::noproc, nullptr});
  return ref;
}

void demonitor_pid(pid target, monitor_ref ref) noexcept {
  slot* s = slot_at(target.index);
  if (s == nullptr)
    return;
  slot_aux* a = s->m_aux.load(std::memory_order_seq_cst);
  if (a == nullptr)
    return;
  std::lock_guard lock(a->m_lock);
  if (!alive_locked(s, target))
    return;
  auto it = std::find_if(a->m_monitors.begin(), a->m_monitors.end(), [&](auto& m) { return m.first == ref; });
  if (it != a->m_monitors.end()) {
    *it = a->m_monitors.back();
    a->m_monitors.pop_back();
  }
}

void make_bounded(pid p, std::uint32_t capacity) {
  slot* s = slot_at(p.index);
  slot_aux* a = aux_of(s);
  std::lock_guard lock(a->m_lock);
  a->m_capacity = capacity;
  a->m_count = 0;
  s->m_flags.fetch_or(slot_bounded, std::memory_order_relaxed);
}

reserve_result bounded_reserve(pid to, bounded_waiter* w) {
  slot* s = slot_at(to.index);
  if (s == nullptr)
    return reserve_result::dead;
  slot_aux* a = aux_of(s);
  std::lock_guard lock(a->m_lock);
  if (!alive_locked(s, to))
    return reserve_result::dead;
  if (a->m_capacity == 0 || (a->m_count < a->m_capacity && a->m_wait_head == nullptr)) {
    ++a->m_count;
    return reserve_result::granted;
  }
  w->m_next = nullptr;
  w->m_granted = false;
  (a->m_wait_tail ? a->m_wait_tail->m_next : a->m_wait_head) = w;
  a->m_wait_tail = w;
  return reserve_result::queued;
}

void bounded_count(pid to) noexcept {
  slot* s = slot_at(to.index);
  slot_aux* a = s->m_aux.load(std::memory_order_acquire);
  if (a == nullptr)
    return;
  std::lock_guard lock(a->m_lock);
  if (alive_locked(s, to))
    ++a->m_count;
}

void bounded_consumed(pid self) noexcept {
  slot* s = slot_at(self.index);
  slot_aux* a = s->m_aux.load(std::memory_order_acquire);
  bounded_waiter* w = nullptr;
  {
    std::lock_guard lock(a->m_lock);
    if (a->m_wait_head != nullptr && a->m_count <= a->m_capacity) {
      // The freed room goes to the oldest waiting sender (the count stays).
      w = a->m_wait_head;
      a->m_wait_head = w->m_next;
      if (a->m_wait_head == nullptr)
        a->m_wait_tail = nullptr;
      w->m_granted = true;
    } else if (a->m_count > 0) {
      --a->m_count;
    }
  }
  if (w)
    w->m_task->wake();  // lifetime: the waiter's frame stays suspended until this wake
}

node_base* end_process(pid self, const exit_reason& reason, bool notify, owned_base** owned) {
  slot* s = slot_at(self.index);
  const std::uint32_t next = next_generation(self.generation);
  // ordering: seq_cst, the ending half of the link/end protocol (signals.hpp): from here
  // on, sends fail their generation check, and link/monitor report noproc.
  s->m_gen.store(next, std::memory_order_seq_cst);
  // ordering: acquire takes ownership of the nodes still in the inbox.
  const std::uint64_t w = s->m_word.exchange(inbox_tag(next) | inbox_dead, std::memory_order_acquire);
  node_base* rest = inbox_has_nodes(w) ? reinterpret_cast<node_base*>(inbox_payload(w)) : nullptr;

  std::vector<pid> links;
  std::vector<std::pair<monitor_ref, pid>> monitors;
  bounded_waiter* waiters = nullptr;
  if (slot_aux* a = s->m_aux.load(std::memory_order_seq_cst)) {
    std::lock_guard lock(a->m_lock);
    links.swap(a->m_links);
    monitors.swap(a->m_monitors);
    waiters = a->m_wait_head;
    a->m_wait_head = a->m_wait_tail = nullptr;
    a->m_capacity = 0;
    a->m_count = 0;
    *owned = std::exchange(a->m_owned, nullptr);
    a->m_error = nullptr;
  }
  const std::uint32_t flags = s->m_flags.exchange(0, std::memory_order_seq_cst);
  if (flags & slot_registered)
    registry_forget(self);
  while (waiters) {
    bounded_waiter* n = waiters->m_next;
    waiters->m_granted = false;
    waiters->m_task->wake();
    waiters = n;
  }
  if (notify) {
    for (const pid& q : links)
      if (drop_link(q, self))
        push_exit_signal(q, self, reason);
    for (const auto& [ref, watcher] : monitors)
      push_down(watcher, ref, self, reason);
  }
  return rest;
}

}  // namespace saturn::detail
