/// \file
/// The pid table: a chunked slab of 32-byte slots, one per live process, never freed (so
/// a stale pid can always be looked up safely) and reused with a bumped generation.
///
/// A slot holds the process's inbox word — the shared half of its mailbox — so a sender
/// touches only the slot, never the process's frame (which is freed the moment the
/// process ends). The inbox word packs a 16-bit generation tag and a 48-bit payload:
///   payload == inbox_empty   no message, the process is running (or not yet started)
///   payload == inbox_parked  no message, the process is suspended in receive
///   payload == inbox_dead    the process has ended (or the slot is free)
///   otherwise                the newest pushed node (a Treiber stack, newest first)
/// A send is one CAS on that word. It checks the full 32-bit generation first and the
/// 16-bit tag in the CAS itself, so a process that ends (or a slot reused) between the
/// check and the push makes the CAS fail: a message never lands in another process.
/// The sender that replaces inbox_parked owns the wake-up and schedules the process.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/proc/detail/node.hpp>
#include <saturn/proc/pid.hpp>
#include <saturn/task/detail/promise_base.hpp>

#include <atomic>
#include <cstdint>

namespace saturn::detail {

inline constexpr std::uint64_t inbox_empty = 0;
inline constexpr std::uint64_t inbox_parked = 1;
inline constexpr std::uint64_t inbox_dead = 2;
inline constexpr std::uint64_t inbox_payload_mask = (std::uint64_t{1} << 48) - 1;

inline constexpr std::uint64_t inbox_tag(std::uint32_t generation) noexcept {
  return std::uint64_t{generation & 0xffffu} << 48;
}
inline constexpr std::uint64_t inbox_payload(std::uint64_t w) noexcept { return w & inbox_payload_mask; }
inline constexpr bool inbox_has_nodes(std::uint64_t w) noexcept { return inbox_payload(w) > inbox_dead; }

struct slot_aux;

/// Slot flag bits (slot::m_flags).
enum : std::uint32_t {
  slot_registered = 1u << 0,  ///< the process has (or had) a registered name
  slot_bounded = 1u << 1,     ///< the process's mailbox is bounded (slot_aux::capacity)
};

/// One entry of the pid table (32 bytes).
struct slot {
  saturn::detail::atomic<std::uint64_t> m_word{inbox_tag(1) | inbox_dead};
  promise_base* m_proc = nullptr;  ///< the process; read only by whoever wakes it
  saturn::detail::atomic<std::uint32_t> m_gen{1};
  saturn::detail::atomic<std::uint32_t> m_flags{0};
  saturn::detail::atomic<slot_aux*> m_aux{nullptr};  ///< links, monitors, bound; created on first use
};
static_assert(sizeof(slot) == 32);

inline constexpr unsigned slot_chunk_shift = 12;  // 4096 slots (128 KiB) per chunk
inline constexpr unsigned slot_chunk_count = 1u << 14;  // up to 64 Mi processes
extern saturn::detail::atomic<slot*> g_slot_chunks[slot_chunk_count];

/// The slot of `index`, or nullptr if no process ever had it. Any thread.
inline slot* slot_at(std::uint32_t index) noexcept {
  const std::uint32_t c = index >> slot_chunk_shift;
  if (c >= slot_chunk_count)
    return nullptr;
  // ordering: acquire pairs with the release that published the zeroed, constructed chunk.
  slot* chunk = g_slot_chunks[c].load(std::memory_order_acquire);
  return chunk ? chunk + (index & ((1u << slot_chunk_shift) - 1)) : nullptr;
}

/// Takes a free slot for process `p` and opens its inbox; returns the process's pid.
/// Any thread (per-thread caches of free indices). Throws std::length_error at the cap.
pid slot_acquire(promise_base* p);
/// Gives back the slot of a process that has ended (its inbox is already dead). Any thread.
void slot_release(std::uint32_t index) noexcept;

/// Pushes `n` onto the inbox of `to`; wakes the process if it was parked in receive.
/// Returns false (the node is not taken) if `to` has ended. Any thread; never blocks.
inline bool inbox_push(pid to, node_base* n) noexcept {
  slot* s = slot_at(to.index);
  if (s == nullptr || s->m_gen.load(std::memory_order_acquire) != to.generation)
    return false;
  const std::uint64_t tag = inbox_tag(to.generation);
  std::uint64_t w = s->m_word.load(std::memory_order_relaxed);
  for (;;) {
    if ((w & ~inbox_payload_mask) != tag || inbox_payload(w) == inbox_dead)
      return false;
    n->m_next = inbox_has_nodes(w) ? reinterpret_cast<node_base*>(inbox_payload(w)) : nullptr;
    // ordering: release publishes the node's contents to the receiver's acquire exchange;
    // acquire (on the parked case) makes the process's state before parking visible to
    // the wake below.
    if (s->m_word.compare_exchange_weak(w, tag | reinterpret_cast<std::uint64_t>(n), std::memory_order_acq_rel,
                                        std::memory_order_relaxed))
      break;
  }
  if (inbox_payload(w) == inbox_parked) {
    // lifetime: a parked process cannot end until this wake runs it.
    // Through spawn(), not schedule(): on a pool worker the receiver goes to the LIFO slot
    // and runs next on this worker, where the message is hot in cache (and where idle
    // workers take it only after a steal round found nothing else); a message chain
    // (a ring, a pipeline) stays on one core instead of bouncing between them.
    promise_base* p = s->m_proc;
    p->m_ctx->sched->spawn(p);
  }
  return true;
}

/// True while the process named by `p` has not ended. Any thread.
inline bool pid_alive(pid p) noexcept {
  slot* s = slot_at(p.index);
  return s != nullptr && p.generation != 0 && s->m_gen.load(std::memory_order_acquire) == p.generation;
}

}  // namespace saturn::detail
