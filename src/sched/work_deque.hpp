#pragma once
// The per-worker run queue: a bounded Chase-Lev work-stealing deque of task pointers,
// with a batch steal ("steal half") that moves many tasks with one CAS.
//
// Protocol
// --------
// Logical indices run upwards without bound (stored mod 2^32); index i lives in slot
// i % Capacity. Live items are [top, bottom). `bottom` is written only by the owner.
// `top` is one 64-bit word {index:32, tag:32}, changed only by RMWs. Thieves CAS
// {t, g} -> {t + n, g} to claim the n oldest items [t, t + n); K = MaxBatch bounds every
// claim, 1 <= n <= K. The owner never moves the index; it adds 1 to the tag (fetch_add),
// which makes every thief CAS based on an older top fail.
//
// push (owner):  write slot b; bottom = b + 1 (release). Full when b - top == Capacity.
// steal (thief): t = top (acquire); seq_cst fence; b = bottom (acquire); if t < b: read the
//                items [t, t + n), then CAS top {t, g} -> {t + n, g}; on failure start over.
//                steal() has n = 1; steal_half_into has n = min(K, ceil((b - t) / 2), room).
// pop (owner):   b = bottom - 1; t = top (relaxed hint: top only grows, so t > b means
//                empty); bottom = b (release); then
//                far path (b - t >= K): seq_cst fence; t = top; if still b - t >= K take
//                slot b with no RMW, else go on to the near path;
//                near path: {t, g} = fetch_add(top, tag 1), no fence needed; if t <= b take
//                slot b, else thieves took it meanwhile (t == b + 1): restore bottom = b + 1.
// push, steal and the far path are Lê, Pop, Cohen, Zappa Nardelli, "Correct and Efficient
// Work-Stealing for Weak Memory Models" (PPoPP 2013), with the same seq_cst fences. Their
// release fence in push becomes a release store on *every* write of bottom: whichever
// value a thief reads, it then synchronizes with all pushes before it, as with the fence,
// and ThreadSanitizer (which ignores fences) sees it. On x86 both are free.
//
// Why every item is taken exactly once
// ------------------------------------
// Plain Chase-Lev lets the owner take slot b without a CAS whenever top < b. That is
// unsafe once a thief claims n > 1 items: its view of bottom may be older than several
// pops, so the owner can pop down into [t, t + n) before the thief's CAS lands. Here the
// owner skips the CAS only when b - top >= K. Take a successful thief claim [t, t + n)
// (T1 read top, fence F_T, T3 read bottom = b_T, then read the slots, CAS) and an owner pop
// P that takes index j. Thieves never overlap each other: their CASes form a chain on one
// word and each moves the index past what it claimed.
//  - P on the far path (store bottom = j; fence F_P; read top = t_P; j - t_P >= K):
//    if F_T precedes F_P in the seq_cst order S, P's read of top is not older than T1's
//    ([atomics.order], coherence-ordered-before), so t_P >= t and j >= t + K >= t + n: j
//    is outside the claim. If F_P precedes F_T, T3 sees P's bottom = j or a later store.
//  - P on the near path (store bottom = j; RMW C_P on top reads index t_P <= j): if the
//    thief's CAS comes first in top's modification order, t_P >= t + n, so j is outside
//    the claim. Else C_P comes first; top's values never repeat (index and tag only
//    grow), so T1 read C_P or a later RMW (C_P's release sequence): C_P synchronizes
//    with T1, and T3 again sees bottom = j or a later owner store.
//  In the "T3 sees j or later" cases: if b_T <= j the claim [t, t + n) ⊆ [t, b_T) misses
//  j. If b_T > j, the owner pushed index j again after P, and the release store T3 read
//  comes after that push, so the thief reads the new item in slot j, not P's.
// So no index is taken twice, and top never passes bottom + 1 (a pop's restore is right).
// A push overwrites slot b % Capacity only when top > b - Capacity: it read that top with
// acquire from the CAS that claimed b - Capacity, after which the claiming thief's slot
// read happened before the overwrite. The items moved into the thief's own deque are
// published there by a release store of its bottom, as in push.
//
// ABA: a thief stalled between T1 and its CAS is fooled only if top returns to the same
// {index, tag}: 2^32 near-path pops and 2^32 stolen items while it sleeps.
//
// Cost: push is plain stores; pop is one seq_cst fence (far) or one locked add (near: at
// most K items left; plain Chase-Lev pays fence + CAS for its last item); steal is a fence
// and a CAS, and so is steal_batch / steal_half_into for up to K items. The owner never loops.

#include "saturn/detail/atomic.hpp"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>

namespace saturn::sched {

/// A bounded Chase-Lev work-stealing deque of `T*` (intrusive task nodes; the deque never
/// owns, frees or dereferences them). One owner thread calls push, pop and
/// steal_half_into (as owner of the destination); any thread may call steal,
/// steal_half_into (as thief of `*this`) and size_approx. Nothing blocks or allocates;
/// every operation is lock-free. Capacity is a power of two; a steal moves at most
/// MaxBatch items, and a pop with at most MaxBatch items left costs a locked RMW on the
/// thieves' cache line instead of a fence (a larger MaxBatch means more such pops).
template <class T, std::size_t Capacity, std::size_t MaxBatch = Capacity / 2>
class work_deque {
  static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0, "Capacity must be a power of two >= 2");
  static_assert(Capacity <= (std::size_t{1} << 30), "indices are 32-bit; keep Capacity far below 2^31");
  static_assert(MaxBatch >= 1 && MaxBatch <= Capacity / 2, "MaxBatch must be in [1, Capacity / 2]");
  static_assert(alignof(T) >= 2, "bit 0 of an item's address carries the steal_alone mark");

public:
  static constexpr std::size_t capacity = Capacity;
  static constexpr std::size_t max_batch = MaxBatch;

  /// An empty deque. `first_index` only matters to tests, which start near 2^32 to
  /// exercise index wrap-around.
  explicit work_deque(std::uint32_t first_index = 0) noexcept
      : m_top{first_index}, m_bottom{first_index} {}
  work_deque(const work_deque&) = delete;
  work_deque& operator=(const work_deque&) = delete;

  /// Owner only. Appends `item` at the bottom. Returns false, changing nothing, when the
  /// deque is full; the caller then moves a batch to the global injection queue.
  /// `steal_alone` marks an item that a batch steal takes only by itself (a fork of a
  /// join: see steal_half_into); steal, steal_batch and pop ignore the mark.
  [[nodiscard]] bool push(T* item, bool steal_alone = false) noexcept {
    // ordering: relaxed; only this thread writes bottom.
    const std::uint32_t b = m_bottom.load(std::memory_order_relaxed);
    // ordering: acquire pairs with the thief CAS that freed slot b: its read of the old
    // item happens before our overwrite below.
    const std::uint32_t t = index_of(m_top.load(std::memory_order_acquire));
    if (b - t >= Capacity) return false;
    // ordering: relaxed; published by the release store of bottom below.
    slot(b).store(pack(item, steal_alone), std::memory_order_relaxed);
    // ordering: release publishes the slot and the task's contents to any thief that
    // reads this value or a later one (all bottom stores are release).
    m_bottom.store(b + 1, std::memory_order_release);
    return true;
  }

  /// Owner only. Removes and returns the most recently pushed item, or nullptr when empty
  /// (including when thieves took the last items first).
  [[nodiscard]] T* pop() noexcept {
    // ordering: relaxed; only this thread writes bottom.
    const std::uint32_t b = m_bottom.load(std::memory_order_relaxed) - 1;
    // ordering: relaxed; a hint. top's index only grows, so a stale value is too small:
    // "empty" is then certain; "far" is re-checked after the fence, "near" by the RMW.
    std::uint64_t t = m_top.load(std::memory_order_relaxed);
    if (distance(b, t) < 0) return nullptr;
    // ordering: release, so a thief reading this value still synchronizes with the pushes
    // before it (Lê et al.'s push fence); seen by thieves via the fence or RMW that follows.
    m_bottom.store(b, std::memory_order_release);
    if (distance(b, t) >= static_cast<std::int32_t>(MaxBatch)) {
      // ordering: seq_cst fence between our bottom store and top load (Lê et al.'s take):
      // any thief either sees the new bottom or is seen by the load below.
      detail::thread_fence(std::memory_order_seq_cst);
      // ordering: relaxed; the fence above makes it fresh enough (see the proof).
      t = m_top.load(std::memory_order_relaxed);
      // ordering: relaxed; slot b is our own write.
      if (distance(b, t) >= static_cast<std::int32_t>(MaxBatch)) return unpack(slot(b).load(std::memory_order_relaxed));
    }
    // ordering: seq_cst RMW (release part): a thief whose CAS follows reads this value or
    // a later one, so it synchronizes with us and sees bottom = b. The tag wraps mod 2^32.
    t = m_top.fetch_add(tag_one, std::memory_order_seq_cst);
    // ordering: relaxed; slot b is our own write and no thief can claim it now.
    if (distance(b, t) >= 0) return unpack(slot(b).load(std::memory_order_relaxed));
    // ordering: release like every bottom store; thieves took index b, top == b + 1.
    m_bottom.store(b + 1, std::memory_order_release);
    return nullptr;
  }

  /// Any thread. Removes and returns the oldest item, or nullptr when empty. Retries
  /// while it loses races to other thieves or the owner (lock-free, not wait-free).
  [[nodiscard]] T* steal() noexcept {
    // ordering: acquire pairs with the release of the CAS that wrote this top value.
    std::uint64_t t = m_top.load(std::memory_order_acquire);
    for (;;) {
      const std::int32_t count = load_count(t);
      if (count <= 0) return nullptr;
      // ordering: relaxed; the acquire load of bottom in load_count made it visible, and
      // a stale read is harmless because the CAS below then fails.
      T* item = unpack(slot(index_of(t)).load(std::memory_order_relaxed));
      // ordering: seq_cst as in Lê et al.; on failure acquire, since t is reused as our
      // fresh read of top.
      if (m_top.compare_exchange_weak(t, advance(t, 1), std::memory_order_seq_cst, std::memory_order_acquire))
        return item;
      detail::cpu_relax();
    }
  }

  /// Any thread. Claims up to min(`max`, MaxBatch) of the oldest items with one CAS and
  /// writes them to out[0, n), oldest first. Returns n; 0 when empty. Retries while it
  /// loses races, as steal(). A claim of at most MaxBatch items is what the proof above
  /// covers, so a caller wanting more calls again.
  [[nodiscard]] std::uint32_t steal_batch(T** out, std::uint32_t max) noexcept {
    // ordering: acquire, as in steal.
    std::uint64_t t = m_top.load(std::memory_order_acquire);
    for (;;) {
      const std::int32_t count = load_count(t);
      if (count <= 0) return 0;
      const std::uint32_t n = std::min({static_cast<std::uint32_t>(count), static_cast<std::uint32_t>(MaxBatch), max});
      const std::uint32_t first = index_of(t);
      // ordering: relaxed, as in steal: a stale read fails the CAS below.
      for (std::uint32_t i = 0; i < n; ++i) out[i] = unpack(slot(first + i).load(std::memory_order_relaxed));
      // ordering: as in steal.
      if (m_top.compare_exchange_weak(t, advance(t, n), std::memory_order_seq_cst, std::memory_order_acquire))
        return n;
      detail::cpu_relax();
    }
  }

  /// Any thread steals from `*this`; the caller must be the owner of `thief_own`, and
  /// `&thief_own != this`. Claims about half of the items (the oldest; at most
  /// MaxBatch, and no more than fit in `thief_own` plus one) with one CAS, pushes all but
  /// the newest claimed into `thief_own` (oldest first) and returns that newest one to run
  /// now. Returns nullptr when `*this` is empty. `*moved`, if given, receives how many
  /// items went into `thief_own`.
  ///
  /// An item pushed with `steal_alone` is claimed only by itself: when the oldest item
  /// has the mark, the claim is that one item; otherwise the claim stops before the first
  /// marked item. Why: the forks of nested joins sit on their joiner's deque oldest =
  /// largest; taking half of them would take forks the joiner reaches again a moment later
  /// (it must then wait for, or steal back, work nobody has started), where taking the
  /// oldest alone splits the work at its top, as rayon's join does. Measured on the
  /// forkjoin suite's matmul_512 at 2 threads: 95 ns a task with half-steals of forks,
  /// 45-65 with single ones (rayon 73). A claim of more than one item holds no marked
  /// item, so no mark is ever moved into `thief_own`.
  template <std::size_t OwnCapacity, std::size_t OwnBatch>
  [[nodiscard]] T* steal_half_into(work_deque<T, OwnCapacity, OwnBatch>& thief_own,
                                   std::size_t* moved = nullptr) noexcept {
    assert(static_cast<void*>(&thief_own) != static_cast<void*>(this));
    // ordering: relaxed; we own thief_own, so we are the only writer of its bottom.
    const std::uint32_t db = thief_own.m_bottom.load(std::memory_order_relaxed);
    // ordering: acquire, as in push: reads of the slots we overwrite happened before.
    const std::uint32_t dt = work_deque<T, OwnCapacity, OwnBatch>::index_of(thief_own.m_top.load(std::memory_order_acquire));
    const std::uint32_t room = static_cast<std::uint32_t>(OwnCapacity) - (db - dt);
    // ordering: acquire, as in steal.
    std::uint64_t t = m_top.load(std::memory_order_acquire);
    for (;;) {
      const std::int32_t count = load_count(t);
      if (count <= 0) {
        if (moved != nullptr) *moved = 0;
        return nullptr;
      }
      std::uint32_t n = std::min({static_cast<std::uint32_t>(count - count / 2),
                                  static_cast<std::uint32_t>(MaxBatch), room + 1});
      const std::uint32_t first = index_of(t);
      // ordering: relaxed, as in steal: a stale read fails the CAS below. A smaller claim
      // than the one counted is always a valid claim, so the marks may shorten it.
      std::uintptr_t newest = slot(first).load(std::memory_order_relaxed);
      if ((newest & k_alone) != 0) {
        n = 1;
      } else {
        for (std::uint32_t i = 1; i < n; ++i) {
          // ordering: relaxed, as above.
          const std::uintptr_t v = slot(first + i).load(std::memory_order_relaxed);
          if ((v & k_alone) != 0) {
            n = i;
            break;
          }
          // ordering: relaxed both; the source is visible through load_count's acquire and
          // the copy is invisible to thief_own's thieves until the store below publishes it.
          thief_own.slot(db + i - 1).store(newest, std::memory_order_relaxed);
          newest = v;
        }
      }
      // ordering: as in steal.
      if (m_top.compare_exchange_weak(t, advance(t, n), std::memory_order_seq_cst, std::memory_order_acquire)) {
        // ordering: release, as in push, publishes the copied slots.
        if (n > 1) thief_own.m_bottom.store(db + n - 1, std::memory_order_release);
        if (moved != nullptr) *moved = n - 1;
        return unpack(newest);
      }
      detail::cpu_relax();
    }
  }

  /// Any thread. The number of items, exact for the owner when no thief is active and a
  /// snapshot otherwise.
  std::size_t size_approx() const noexcept {
    // ordering: relaxed both; an estimate, nothing is read through it.
    const std::uint32_t b = m_bottom.load(std::memory_order_relaxed);
    const std::int32_t n = distance(b, m_top.load(std::memory_order_relaxed));
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }

private:
  template <class, std::size_t, std::size_t>
  friend class work_deque;  // steal_half_into fills a deque of another capacity

  static constexpr std::uint64_t tag_one = std::uint64_t{1} << 32;

  static constexpr std::uint32_t index_of(std::uint64_t top) noexcept { return static_cast<std::uint32_t>(top); }
  static constexpr std::uint64_t advance(std::uint64_t top, std::uint32_t n) noexcept {
    return (top & ~std::uint64_t{0xffff'ffff}) | static_cast<std::uint32_t>(index_of(top) + n);
  }
  /// `b - index(top)` as a signed distance (indices wrap mod 2^32).
  static constexpr std::int32_t distance(std::uint32_t b, std::uint64_t top) noexcept {
    return static_cast<std::int32_t>(b - index_of(top));
  }

  /// The thief's half of the Chase-Lev handshake: after reading top into `t`, how many
  /// items [t, bottom) it may try to claim.
  std::int32_t load_count(std::uint64_t t) const noexcept {
    // ordering: seq_cst fence between our top and bottom loads (Lê et al.'s steal): either
    // we see a popping owner's bottom store or its top load after its fence sees us.
    detail::thread_fence(std::memory_order_seq_cst);
    // ordering: acquire pairs with the release bottom stores: slots below bottom are visible.
    return distance(m_bottom.load(std::memory_order_acquire), t);
  }

  /// A slot holds the item's address with bit 0 set for `steal_alone` (T is at least
  /// 2-aligned; the deque never dereferences an item).
  static constexpr std::uintptr_t k_alone = 1;
  static std::uintptr_t pack(T* item, bool alone) noexcept {
    return reinterpret_cast<std::uintptr_t>(item) | (alone ? k_alone : 0);
  }
  static T* unpack(std::uintptr_t v) noexcept { return reinterpret_cast<T*>(v & ~k_alone); }

  detail::atomic<std::uintptr_t>& slot(std::uint32_t i) noexcept { return m_slots[i & (Capacity - 1)]; }

  alignas(detail::cache_line) detail::atomic<std::uint64_t> m_top;    // thieves' CAS, owner's near-path fetch_add
  alignas(detail::cache_line) detail::atomic<std::uint32_t> m_bottom; // written by the owner only
  alignas(detail::cache_line) detail::atomic<std::uintptr_t> m_slots[Capacity]{};
};

} // namespace saturn::sched
