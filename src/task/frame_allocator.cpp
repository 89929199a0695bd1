// Slow paths of the frame allocator: refilling a thread's list from the global pool or a
// fresh chunk, moving the excess of a capped list to the global pool, trimming (giving
// chunks whose every frame is free back to the kernel), and the in-use accounting (the
// live threads' caches in a list, the exited threads' carved bytes folded into totals:
// in use = carved - listed - trimmed).
#include <saturn/task/frame_allocator.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <saturn/detail/atomic.hpp>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace saturn::detail {

constinit thread_local frame_cache t_frame_cache{};

namespace {

constexpr unsigned k_classes = frame_max_small / 8;
constexpr std::size_t k_chunk = 256 * 1024;  // mmapped: pages are touched lazily, munmapped by trim
constexpr unsigned k_batch = 1024;  // frames per batch when trim re-forms the pool

struct batch {
  frame_node* head;
  unsigned count;
};

/// A chunk frames are carved from. `carved` (the bytes of frames carved from it) is final once the chunk is retired (its
/// thread moved on to a new chunk or exited); only retired chunks can be trimmed.
struct chunk_info {
  char* base;
  std::size_t carved;
  bool retired;
};

/// Global per-class pool of batches, and every live chunk (kept reachable so leak
/// checkers do not report frames that live in them).
struct global_pool {
  std::mutex mutex;
  std::vector<batch> batches[k_classes];
  // ordering: relaxed hint read without the lock so an empty pool costs no lock; the
  // mutex orders the batches themselves.
  atomic<unsigned> counts[k_classes] = {};
  std::vector<chunk_info> chunks;  // sorted by base
  frame_cache* live = nullptr;     // registered threads' caches (frame_cache::live_next)
  std::uint64_t exited_carved = 0;  // bytes carved by the threads that exited
  std::uint64_t exited_large = 0;   // large in-use counts of the threads that exited (mod 2^64)
  std::uint64_t trimmed = 0;        // carved bytes of the chunks frame_trim released
};

global_pool& pool() {
  static global_pool* p = new global_pool;  // lifetime: never destroyed (threads may outlive statics)
  return *p;
}

chunk_info* find_chunk(global_pool& g, const void* p) {
  auto it = std::upper_bound(g.chunks.begin(), g.chunks.end(), static_cast<const char*>(p),
                             [](const char* a, const chunk_info& c) { return a < c.base; });
  if (it == g.chunks.begin())
    return nullptr;
  --it;
  return static_cast<const char*>(p) < it->base + k_chunk ? &*it : nullptr;
}

/// Under g.mutex: the thread's current chunk is done (`bump` is where carving stopped).
void retire_chunk(global_pool& g, frame_cache& c) {
  if (c.bump == nullptr)
    return;
  if (chunk_info* ci = find_chunk(g, c.bump_end - 1)) {
    ci->carved = static_cast<std::size_t>(c.bump - ci->base) - c.bump_pad;  // frame bytes only
    ci->retired = true;
  }
  c.bump = c.bump_end = nullptr;
  c.bump_pad = 0;
}

/// Under g.mutex: moves the calling thread's lists to the global pool.
void flush_lists(global_pool& g, frame_cache& c) {
  for (unsigned cls = 0; cls < k_classes; ++cls) {
    if (c.lists[cls] != nullptr) {
      g.batches[cls].push_back(batch{c.lists[cls], c.counts[cls].load(std::memory_order_relaxed)});
      g.counts[cls].store(static_cast<unsigned>(g.batches[cls].size()), std::memory_order_relaxed);
    }
    c.lists[cls] = nullptr;
    c.counts[cls].store(0, std::memory_order_relaxed);
  }
}

/// Moves a thread's lists to the global pool, retires its chunk and folds its in-use
/// counts into the exited totals, when the thread exits.
struct thread_flusher {
  ~thread_flusher() {
    frame_cache& c = t_frame_cache;
    global_pool& g = pool();
    std::lock_guard lock(g.mutex);
    flush_lists(g, c);
    retire_chunk(g, c);
    if constexpr (config::metrics)
      g.exited_carved += c.carved.exchange(0, std::memory_order_relaxed);
    g.exited_large += c.large_in_use.exchange(0, std::memory_order_relaxed);
    if (c.live_prev != nullptr)
      c.live_prev->live_next = c.live_next;
    else if (g.live == &c)
      g.live = c.live_next;
    if (c.live_next != nullptr)
      c.live_next->live_prev = c.live_prev;
    c.live_prev = c.live_next = nullptr;
  }
};
thread_local thread_flusher t_flusher;

}  // namespace

void frame_register_thread() noexcept {
  frame_cache& c = t_frame_cache;
  if (c.exit_hook)
    return;
  c.exit_hook = true;
  (void)&t_flusher;  // first odr-use constructs it: its destructor runs at thread exit
  global_pool& g = pool();
  std::lock_guard lock(g.mutex);
  c.live_prev = nullptr;
  c.live_next = g.live;
  if (g.live != nullptr)
    g.live->live_prev = &c;
  g.live = &c;
}

namespace {

bool refill_from_pool(frame_cache& c, unsigned cls) {
  global_pool& g = pool();
  if (g.counts[cls].load(std::memory_order_relaxed) == 0)
    return false;
  std::lock_guard lock(g.mutex);
  if (g.batches[cls].empty())
    return false;
  batch b = g.batches[cls].back();
  g.batches[cls].pop_back();
  g.counts[cls].store(static_cast<unsigned>(g.batches[cls].size()), std::memory_order_relaxed);
  c.lists[cls] = b.head;
  c.counts[cls].store(b.count, std::memory_order_relaxed);
  return true;
}

}  // namespace

void* frame_allocate_slow(std::size_t size) {
  frame_register_thread();  // a thread that only refills from the pool hands back too
  frame_cache& c = t_frame_cache;
  if (size > frame_max_small) {
    void* p = ::operator new(size);
    frame_count(c.large_in_use, size);
    return p;
  }
  const unsigned cls = frame_class(size);
  if (refill_from_pool(c, cls)) {
    frame_node* n = c.lists[cls];
    c.lists[cls] = n->next;
    frame_list_add(c.counts[cls], ~0u);  // -1
    return n;
  }
  const std::size_t rounded = frame_class_size(cls);
  // An even multiple of 8 may hold a 16-aligned object: start it on a 16-byte boundary.
  const std::size_t pad = (rounded % 16 == 0) ? (reinterpret_cast<std::uintptr_t>(c.bump) & 15) : 0;
  if (c.bump == nullptr || static_cast<std::size_t>(c.bump_end - c.bump) < rounded + pad) {
    void* chunk = ::mmap(nullptr, k_chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (chunk == MAP_FAILED)
      throw std::bad_alloc();
    {
      global_pool& g = pool();
      std::lock_guard lock(g.mutex);
      retire_chunk(g, c);
      chunk_info ci{static_cast<char*>(chunk), 0, false};
      g.chunks.insert(std::upper_bound(g.chunks.begin(), g.chunks.end(), ci,
                                       [](const chunk_info& a, const chunk_info& b) { return a.base < b.base; }),
                      ci);
    }
    c.bump = static_cast<char*>(chunk);
    c.bump_end = c.bump + k_chunk;
  } else {
    c.bump += pad;  // skipped: not a frame, so trim does not wait for it to be freed
    c.bump_pad += pad;
  }
  void* p = c.bump;
  c.bump += rounded;
  frame_count(c.carved, rounded);
  return p;
}

void frame_deallocate_slow(void* p, std::size_t size) noexcept {
  frame_register_thread();  // a thread that only frees large frames: its count must be folded at exit
  frame_cache& c = t_frame_cache;
  if (size > frame_max_small) {
    ::operator delete(p);  // unsized: clang 14 has no sized delete without -fsized-deallocation
    frame_count(c.large_in_use, std::uint64_t{0} - size);
    return;
  }
  // The list is at its cap: hand a batch of it to the global pool, keep the rest.
  const unsigned cls = frame_class(size);
  const unsigned give = frame_cap(cls) / 2;
  frame_node* head = c.lists[cls];
  frame_node* tail = head;
  for (unsigned i = 1; i < give; ++i)
    tail = tail->next;
  c.lists[cls] = tail->next;
  frame_list_add(c.counts[cls], 0u - give);
  tail->next = nullptr;
  {
    global_pool& g = pool();
    std::lock_guard lock(g.mutex);
    g.batches[cls].push_back(batch{head, give});
    g.counts[cls].store(static_cast<unsigned>(g.batches[cls].size()), std::memory_order_relaxed);
  }
  auto* n = static_cast<frame_node*>(p);
  n->next = c.lists[cls];
  c.lists[cls] = n;
  frame_list_add(c.counts[cls], 1);
}

std::size_t frame_mapped_bytes() noexcept {
  global_pool& g = pool();
  std::lock_guard lock(g.mutex);
  return g.chunks.size() * k_chunk;
}

frame_usage_bytes frame_usage() noexcept {
  if constexpr (!config::metrics)
    return {};  // nothing was counted: no lock to take
  global_pool& g = pool();
  std::lock_guard lock(g.mutex);
  // Free frames: the pooled batches and every live thread's lists (exited threads handed
  // theirs to the pool), at their class sizes.
  std::uint64_t listed = 0;
  for (unsigned cls = 0; cls < k_classes; ++cls)
    for (const batch& b : g.batches[cls])
      listed += std::uint64_t{b.count} * frame_class_size(cls);
  std::uint64_t small = g.exited_carved - g.trimmed;
  std::uint64_t large = g.exited_large;
  // lifetime: a cache leaves the list (under this lock) before its thread's storage goes.
  for (const frame_cache* c = g.live; c != nullptr; c = c->live_next) {
    small += c->carved.load(std::memory_order_relaxed);
    large += c->large_in_use.load(std::memory_order_relaxed);
    for (unsigned cls = 0; cls < k_classes; ++cls)
      listed += std::uint64_t{c->counts[cls].load(std::memory_order_relaxed)} * frame_class_size(cls);
  }
  small -= listed;
  // The counts are read one thread after another: a frame moving between two threads'
  // lists meanwhile can make the difference dip below zero for an instant.
  const auto clamp = [](std::uint64_t v) { return static_cast<std::int64_t>(v) < 0 ? 0 : static_cast<std::size_t>(v); };
  return {clamp(small), clamp(large)};
}

std::size_t frame_trim() noexcept {
  global_pool& g = pool();
  frame_cache& c = t_frame_cache;
  std::lock_guard lock(g.mutex);
  flush_lists(g, c);
  // Free bytes per chunk, from every free frame in the global pool.
  std::vector<std::size_t> free_bytes(g.chunks.size(), 0);
  for (unsigned cls = 0; cls < k_classes; ++cls) {
    const std::size_t rounded = frame_class_size(cls);
    for (const batch& b : g.batches[cls])
      for (frame_node* n = b.head; n != nullptr; n = n->next)
        if (chunk_info* ci = find_chunk(g, n))
          free_bytes[static_cast<std::size_t>(ci - g.chunks.data())] += rounded;
  }
  std::vector<bool> release(g.chunks.size(), false);
  std::size_t released = 0;
  for (std::size_t i = 0; i < g.chunks.size(); ++i) {
    const chunk_info& ci = g.chunks[i];
    if (ci.retired && free_bytes[i] == ci.carved) {
      release[i] = true;
      ++released;
    }
  }
  if (released == 0)
    return 0;
  // Unlink the frames of released chunks and re-form the batches from the rest.
  for (unsigned cls = 0; cls < k_classes; ++cls) {
    std::vector<batch> kept;
    batch cur{nullptr, 0};
    for (const batch& b : g.batches[cls]) {
      frame_node* n = b.head;
      while (n != nullptr) {
        frame_node* next = n->next;
        chunk_info* ci = find_chunk(g, n);
        if (ci == nullptr || !release[static_cast<std::size_t>(ci - g.chunks.data())]) {
          n->next = cur.head;
          cur.head = n;
          if (++cur.count == k_batch) {
            kept.push_back(cur);
            cur = batch{nullptr, 0};
          }
        }
        n = next;
      }
    }
    if (cur.count != 0)
      kept.push_back(cur);
    g.batches[cls] = std::move(kept);
    g.counts[cls].store(static_cast<unsigned>(g.batches[cls].size()), std::memory_order_relaxed);
  }
  std::vector<chunk_info> live;
  live.reserve(g.chunks.size() - released);
  for (std::size_t i = 0; i < g.chunks.size(); ++i) {
    if (release[i]) {
      g.trimmed += g.chunks[i].carved;  // every frame of it was free: none is in use
      ::munmap(g.chunks[i].base, k_chunk);
    }
    else {
      live.push_back(g.chunks[i]);
    }
  }
  g.chunks = std::move(live);
  return released * k_chunk;
}

}  // namespace saturn::detail
