#pragma once
/// The one door through which saturn reaches atomics, fences, spinning and the futex
/// (DESIGN rule 4). Code in saturn names `saturn::detail::atomic<T>` and
/// `saturn::detail::thread_fence`, never `std::atomic` directly, so that a test build can
/// define SATURN_INSTRUMENTED_ATOMICS and supply `saturn_instrumented_atomic.hpp`
/// (on its include path) with the same names in namespace saturn::detail: `atomic<T>`,
/// `thread_fence`, `cpu_relax`, `futex_wait` (both overloads) and `futex_wake`.
/// A model checker or a race detector then sees every access the runtime makes.

#include <cstddef>

namespace saturn::detail {
/// Size of a destructive-interference unit. 64 rather than
/// std::hardware_destructive_interference_size, whose use g++ warns about (its value is
/// not ABI-stable across -mtune).
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

namespace saturn::detail {

/// The atomic type saturn uses everywhere. Any thread, never suspends.
template <class T>
using atomic = std::atomic<T>;

#if defined(__SANITIZE_THREAD__)
#define SATURN_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SATURN_DETAIL_TSAN 1
#endif
#endif

#if defined(SATURN_DETAIL_TSAN)
inline atomic<int> tsan_fence_word{0};
#endif

/// A standalone fence; `std::atomic_thread_fence` unless instrumented. Any thread.
/// Use it for seq_cst fences only; publish data with release stores, not release fences.
inline void thread_fence(std::memory_order order) noexcept {
#if defined(SATURN_DETAIL_TSAN)
  // ordering: TSan ignores fences (g++ warns). An RMW of the given order on one shared
  // word is at least as strong as a fence: all such RMWs are totally ordered and each
  // synchronizes with the one before, which TSan does model.
  tsan_fence_word.fetch_add(0, order);
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

static_assert(sizeof(atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  atomic<std::uint32_t>::is_always_lock_free,
              "the futex needs atomic<uint32_t> to be a plain 32-bit word");

namespace futex_impl {
inline long call(atomic<std::uint32_t>* word, int op, std::uint32_t value,
                 const timespec* timeout) noexcept {
  // lifetime: the kernel only reads the word during the call; no pointer is kept.
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
}
} // namespace futex_impl

/// Blocks the calling thread while `*word == expected` (checked by the kernel atomically
/// with going to sleep) until a futex_wake on `word`. Any thread; blocks the OS thread, so
/// never call it from a task. May return spuriously (signal, value already changed):
/// callers re-check their condition in a loop.
inline void futex_wait(atomic<std::uint32_t>* word, std::uint32_t expected) noexcept {
  futex_impl::call(word, FUTEX_WAIT_PRIVATE, expected, nullptr);
}

/// As futex_wait, but gives up after `timeout` (relative). Returns false only when the
/// timeout expired; true on a wake-up, a changed value or a signal.
inline bool futex_wait(atomic<std::uint32_t>* word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) noexcept {
  // ordering: relaxed, like the kernel's own check; the caller re-checks its condition.
  if (timeout.count() <= 0) return word->load(std::memory_order_relaxed) != expected;
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec ts{static_cast<time_t>(secs.count()), static_cast<long>((timeout - secs).count())};
  return futex_impl::call(word, FUTEX_WAIT_PRIVATE, expected, &ts) == 0 || errno != ETIMEDOUT;
}

/// Wakes up to `count` threads blocked in futex_wait on `word`; returns how many woke.
/// Any thread, never blocks. The waker must store the new value (the change the waiter
/// waits for) before calling this; the kernel's check-and-sleep then cannot miss it.
inline int futex_wake(atomic<std::uint32_t>* word, int count) noexcept {
  return static_cast<int>(futex_impl::call(word, FUTEX_WAKE_PRIVATE, static_cast<std::uint32_t>(count), nullptr));
}

} // namespace saturn::detail

#endif
