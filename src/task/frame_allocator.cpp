// Slow paths of the frame allocator: refilling a thread's list from the global pool or a
// fresh chunk, and moving the excess of a capped list to the global pool.
#include <saturn/task/frame_allocator.hpp>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace saturn::detail {

thread_local frame_cache t_frame_cache{};

namespace {

constexpr unsigned k_classes = frame_max_small / 16;
constexpr std::size_t k_chunk = 256 * 1024;  // glibc mmaps it: pages are touched lazily
constexpr unsigned k_batch = 1024;

struct batch {
  frame_node* head;
  unsigned count;
};

/// Global per-class pool of batches, and every chunk ever carved (kept reachable so leak
/// checkers do not report frames that live in them).
struct global_pool {
  std::mutex mutex;
  std::vector<batch> batches[k_classes];
  // ordering: relaxed hint read without the lock so an empty pool costs no lock; the
  // mutex orders the batches themselves.
  std::atomic<unsigned> counts[k_classes] = {};
  std::vector<void*> chunks;
};

global_pool& pool() {
  static global_pool* p = new global_pool;  // lifetime: never destroyed (threads may outlive statics)
  return *p;
}

/// Moves a thread's lists to the global pool when the thread exits.
struct thread_flusher {
  ~thread_flusher() {
    frame_cache& c = t_frame_cache;
    global_pool& g = pool();
    std::lock_guard lock(g.mutex);
    for (unsigned cls = 0; cls < k_classes; ++cls) {
      if (c.lists[cls] != nullptr) {
        g.batches[cls].push_back(batch{c.lists[cls], c.counts[cls]});
        g.counts[cls].store(static_cast<unsigned>(g.batches[cls].size()), std::memory_order_relaxed);
      }
      c.lists[cls] = nullptr;
      c.counts[cls] = 0;
    }
  }
};
thread_local thread_flusher t_flusher;

}  // namespace

void frame_register_thread() noexcept {
  t_frame_cache.exit_hook = true;
  (void)&t_flusher;  // first odr-use constructs it: its destructor runs at thread exit
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
  c.counts[cls] = b.count;
  return true;
}

}  // namespace

void* frame_allocate_slow(std::size_t size) {
  if (size > frame_max_small)
    return ::operator new(size);
  if (!t_frame_cache.exit_hook)
    frame_register_thread();  // a thread that only refills from the pool hands back too
  frame_cache& c = t_frame_cache;
  const unsigned cls = frame_class(size);
  if (refill_from_pool(c, cls)) {
    frame_node* n = c.lists[cls];
    c.lists[cls] = n->next;
    --c.counts[cls];
    return n;
  }
  const std::size_t rounded = (static_cast<std::size_t>(cls) + 1) * 16;
  if (c.bump == nullptr || static_cast<std::size_t>(c.bump_end - c.bump) < rounded) {
    frame_register_thread();
    void* chunk = std::malloc(k_chunk);
    if (chunk == nullptr)
      throw std::bad_alloc();
    {
      global_pool& g = pool();
      std::lock_guard lock(g.mutex);
      g.chunks.push_back(chunk);
    }
    c.bump = static_cast<char*>(chunk);
    c.bump_end = c.bump + k_chunk;
  }
  void* p = c.bump;
  c.bump += rounded;
  return p;
}

void frame_deallocate_slow(void* p, std::size_t size) noexcept {
  if (size > frame_max_small) {
    ::operator delete(p);  // unsized: clang 14 has no sized delete without -fsized-deallocation
    return;
  }
  // The list is at its cap: hand a batch of it to the global pool, keep the rest.
  frame_cache& c = t_frame_cache;
  const unsigned cls = frame_class(size);
  frame_node* head = c.lists[cls];
  frame_node* tail = head;
  for (unsigned i = 1; i < k_batch; ++i)
    tail = tail->next;
  c.lists[cls] = tail->next;
  c.counts[cls] -= k_batch;
  tail->next = nullptr;
  {
    global_pool& g = pool();
    std::lock_guard lock(g.mutex);
    g.batches[cls].push_back(batch{head, k_batch});
    g.counts[cls].store(static_cast<unsigned>(g.batches[cls].size()), std::memory_order_relaxed);
  }
  auto* n = static_cast<frame_node*>(p);
  n->next = c.lists[cls];
  c.lists[cls] = n;
  ++c.counts[cls];
}

}  // namespace saturn::detail
