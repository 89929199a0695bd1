#pragma once
/// The one door through which saturn reaches atomics, fences, spinning and the futex
/// (docs/contributing.md, Layers, rule 4). saturn code names `detail::atomic<T>` and
/// `detail::thread_fence`, not std::atomic, so a test build can define
/// SATURN_INSTRUMENTED_ATOMICS and put on its include path a
/// `saturn_instrumented_atomic.hpp` that defines the same names in saturn::detail
/// (atomic<T>, atomic_ref<T>, thread_fence, cpu_relax, futex_wait x2, futex_wake); a model checker or a
/// delay injector then sees every access the runtime makes. tests/model/ holds one (the
/// model checker's), and the ctest check lint.atomic_door keeps bare std::atomic out of
/// include/, src/ and apps/.

#include <cstddef>

namespace saturn::detail {
/// Size of a destructive-interference unit. Not std::hardware_destructive_interference_size,
/// which g++ warns about (its value changes with -mtune, so it is not ABI-stable).
inline constexpr std::size_t cache_line = 64;
} // namespace saturn::detail

#if defined(SATURN_INSTRUMENTED_ATOMICS)
#include "saturn_instrumented_atomic.hpp"
#else

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
#define SATURN_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SATURN_DETAIL_TSAN 1
#endif
#endif

namespace saturn::detail {

/// The atomic type saturn uses everywhere. Any thread, never blocks.
template <class T>
using atomic = std::atomic<T>;

/// Atomic access to a plain object (std::atomic_ref), for a field that is atomic only on
/// some paths. Any thread, never blocks.
template <class T>
using atomic_ref = std::atomic_ref<T>;

#if defined(SATURN_DETAIL_TSAN)
inline atomic<int> tsan_fence_word{0};
#endif

/// std::atomic_thread_fence, for seq_cst fences; publish data with release stores rather
/// than release fences, which ThreadSanitizer cannot see. Any thread, never blocks.
inline void thread_fence(std::memory_order order) noexcept {
#if defined(SATURN_DETAIL_TSAN)
  // ordering: TSan ignores fences (and g++ -Werror=tsan rejects them). A seq_cst RMW on
  // one shared word is stronger than a seq_cst fence: those RMWs are totally ordered and
  // each synchronizes with the one before it, which TSan models.
  (void)order;
  tsan_fence_word.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(order);
#endif
}

/// Tells the CPU we are spinning (x86 `pause`, aarch64 `yield`), easing the sibling
/// hyperthread and the memory pipeline. Any thread, never blocks; no ordering effect.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

static_assert(sizeof(atomic<std::uint32_t>) == 4 && atomic<std::uint32_t>::is_always_lock_free,
              "the futex needs atomic<uint32_t> to be a plain 32-bit word");

inline long futex_call(atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* timeout) noexcept {
  // lifetime: the kernel reads the word only during the call and keeps no pointer.
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
}

/// Blocks the calling OS thread while `*word == expected` (the kernel checks atomically
/// with going to sleep) until a futex_wake on `word`. Any thread, but never from a task.
/// May return spuriously (signal, changed value): callers re-check in a loop.
inline void futex_wait(atomic<std::uint32_t>* word, std::uint32_t expected) noexcept {
  futex_call(word, FUTEX_WAIT_PRIVATE, expected, nullptr);
}

/// As futex_wait, but gives up after `timeout` (relative). Returns false only when the
/// timeout expired; true on a wake-up, a changed value or a signal.
inline bool futex_wait(atomic<std::uint32_t>* word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
  // ordering: relaxed, like the kernel's own check; the caller re-checks its condition.
  if (timeout.count() <= 0) return word->load(std::memory_order_relaxed) != expected;
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec ts{static_cast<time_t>(secs.count()), static_cast<long>((timeout - secs).count())};
  return futex_call(word, FUTEX_WAIT_PRIVATE, expected, &ts) == 0 || errno != ETIMEDOUT;
}

/// Wakes up to `count` threads blocked in futex_wait on `word`; returns how many woke.
/// Any thread, never blocks. Store the new value first; the waiter's check then sees it.
inline int futex_wake(atomic<std::uint32_t>* word, int count) noexcept {
  return static_cast<int>(futex_call(word, FUTEX_WAKE_PRIVATE, static_cast<std::uint32_t>(count), nullptr));
}

} // namespace saturn::detail

#endif
