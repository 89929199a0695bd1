// spawn_blocking's elastic pool: blocking calls never run on a worker. Threads are
// started on demand up to max_blocking_threads and exit after 10 s idle.
#include <chrono>

#include "sched/pool_impl.hpp"

namespace saturn {

void thread_pool::run_blocking(std::function<void()> fn) {
  if (m_impl->simulated) {
    fn();  // one thread in a simulation: the call runs now, in virtual time (sim_pool.hpp)
    return;
  }
  detail::blocking_pool& b = m_impl->blocking;
  std::unique_lock lock(b.mutex);
  b.jobs.push_back(std::move(fn));
  // Enough idle threads for every queued job: wake one. (Testing `idle > 0` lets a burst
  // of calls queue behind one idle thread that has not woken yet.)
  if (b.jobs.size() <= b.idle || b.threads >= b.max_threads) {
    b.cv.notify_one();
    return;
  }
  ++b.threads;
  std::thread t([&b] {
    std::unique_lock l(b.mutex);
    for (;;) {
      while (!b.jobs.empty()) {
        std::function<void()> job = std::move(b.jobs.front());
        b.jobs.pop_front();
        l.unlock();
        job();
        l.lock();
      }
      if (b.stopping)
        break;
      ++b.idle;
      const bool woke = b.cv.wait_for(l, std::chrono::seconds(10), [&] { return !b.jobs.empty() || b.stopping; });
      --b.idle;
      if (!woke)
        break;  // idle too long
    }
    --b.threads;
    // lifetime: hand our own std::thread to the pool to be joined (we cannot join ourselves).
    b.all_done.notify_all();
  });
  b.finished.push_back(std::move(t));
}

}  // namespace saturn
