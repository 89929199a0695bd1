// Counting the threads that hand a loop or a thread_pool work from outside, so that its
// destructor can wait for them (event_loop::post_remote and stop, thread_pool's foreign
// schedule/spawn/start_on and submitters).
//
// The receiver may run the work as soon as it is published — and when it was the last
// task of a block_on, its owner destroys the loop or pool at once — while the thread that
// published it is still in its wake-up (reading the sleeping flag, writing the eventfd,
// taking the sleepers' lock). A hand_off is held from before the publishing push to the
// end of that wake-up; the destructor's first step is wait_for_hand_offs.
//
// Threading: hand_off on any thread; wait_for_hand_offs on the destroying thread.
#pragma once

#include <saturn/detail/atomic.hpp>

#include <cstdint>
#include <thread>

namespace saturn::detail {

class hand_off {
 public:
  /// ordering: relaxed; the increment is sequenced before the publishing push (a
  /// release), so a thread that took the work, and the destructor after it, sees it.
  explicit hand_off(atomic<std::uint32_t>& count) noexcept : m_count(count) {
    m_count.fetch_add(1, std::memory_order_relaxed);
  }
  /// ordering: release; pairs with wait_for_hand_offs' acquire load.
  ~hand_off() { m_count.fetch_sub(1, std::memory_order_release); }
  hand_off(const hand_off&) = delete;
  hand_off& operator=(const hand_off&) = delete;

 private:
  atomic<std::uint32_t>& m_count;
};

/// Returns once no hand_off counted in `count` is left.
inline void wait_for_hand_offs(const atomic<std::uint32_t>& count) noexcept {
  while (count.load(std::memory_order_acquire) != 0)
    std::this_thread::yield();
}

}  // namespace saturn::detail
