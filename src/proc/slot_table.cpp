// The pid table's storage and free-slot management.
//
// Slots live in 128 KiB chunks (4096 slots) allocated on demand, zero pages until used,
// published through a fixed directory and never freed, so any pid — however stale — can
// be looked up without a lock. Free indices are kept per thread (a spawn and an exit cost
// a vector push/pop); a thread's surplus and a finished thread's cache move to a global
// list under a mutex, and fresh indices are taken 256 at a time from a global counter.
#include <saturn/proc/detail/slot_table.hpp>

#include "proc/proc_counters.hpp"
#include "proc/process_dump.hpp"

#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

namespace saturn::detail {

saturn::detail::atomic<slot*> g_slot_chunks[slot_chunk_count];

namespace {

constexpr std::uint32_t k_batch = 256;
constexpr std::size_t k_local_cap = 4096;

struct global_free {
  std::mutex lock;
  std::vector<std::uint32_t> free;
  std::uint32_t next_fresh = 0;  // under lock
  std::mutex chunk_lock;
};

global_free& globals() {
  static global_free* g = new global_free;  // lifetime: never destroyed (threads may exit late)
  return *g;
}

void ensure_chunk(std::uint32_t c) {
  if (g_slot_chunks[c].load(std::memory_order_acquire) != nullptr)
    return;
  global_free& g = globals();
  std::lock_guard lock(g.chunk_lock);
  if (g_slot_chunks[c].load(std::memory_order_relaxed) != nullptr)
    return;
  constexpr std::size_t n = std::size_t{1} << slot_chunk_shift;
  auto* chunk = static_cast<slot*>(::operator new(n * sizeof(slot), std::align_val_t{64}));
  for (std::size_t i = 0; i < n; ++i)
    ::new (chunk + i) slot();
  // ordering: release publishes the constructed slots to slot_at's acquire load.
  g_slot_chunks[c].store(chunk, std::memory_order_release);
}

struct local_free {
  std::vector<std::uint32_t> items;
  ~local_free() {
    if (items.empty())
      return;
    global_free& g = globals();
    std::lock_guard lock(g.lock);
    g.free.insert(g.free.end(), items.begin(), items.end());
  }
};

thread_local local_free t_free;

void refill(std::vector<std::uint32_t>& items) {
  // Cold (once per 256 processes a thread starts): the task dump learns to read processes.
  set_process_reader(&read_process);
  global_free& g = globals();
  std::uint32_t first = 0;
  {
    std::lock_guard lock(g.lock);
    if (!g.free.empty()) {
      const std::size_t take = std::min<std::size_t>(k_batch, g.free.size());
      items.insert(items.end(), g.free.end() - static_cast<std::ptrdiff_t>(take), g.free.end());
      g.free.resize(g.free.size() - take);
      return;
    }
    if (g.next_fresh > (slot_chunk_count << slot_chunk_shift) - k_batch)
      throw std::length_error("saturn: the pid table is full (64 Mi live processes); end some first");
    first = g.next_fresh;
    g.next_fresh += k_batch;
  }
  ensure_chunk(first >> slot_chunk_shift);
  // Hand out the fresh ones lowest first (the vector is popped from the back).
  for (std::uint32_t i = k_batch; i-- > 0;)
    items.push_back(first + i);
}

}  // namespace

std::uint32_t slots_handed_out() noexcept {
  global_free& g = globals();
  std::lock_guard lock(g.lock);
  return g.next_fresh;
}

pid slot_acquire(promise_base* p) {
  std::vector<std::uint32_t>& items = t_free.items;
  if (items.empty())
    refill(items);
  const std::uint32_t index = items.back();
  items.pop_back();
  // ordering: acquire pairs with ensure_chunk's release (the chunk may come from another thread).
  slot* s = g_slot_chunks[index >> slot_chunk_shift].load(std::memory_order_acquire) +
            (index & ((1u << slot_chunk_shift) - 1));
  // ordering: only this thread owns a free slot; m_gen was bumped when its last process
  // ended. The pid reaches other threads only through a synchronizing hand-off.
  const std::uint32_t gen = s->m_gen.load(std::memory_order_relaxed);
  s->m_proc = p;
  s->m_flags.store(0, std::memory_order_relaxed);
  s->m_word.store(inbox_tag(gen) | inbox_empty, std::memory_order_release);
  return pid{index, gen};
}

void slot_release(std::uint32_t index) noexcept {
  try {
    std::vector<std::uint32_t>& items = t_free.items;
    items.push_back(index);
    if (items.size() >= k_local_cap) {
      global_free& g = globals();
      std::lock_guard lock(g.lock);
      g.free.insert(g.free.end(), items.end() - static_cast<std::ptrdiff_t>(k_local_cap / 2), items.end());
      items.resize(items.size() - k_local_cap / 2);
    }
  } catch (...) {
    // Out of memory for the free list: the slot is leaked (it stays dead), nothing breaks.
  }
}

}  // namespace saturn::detail
