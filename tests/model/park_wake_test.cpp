// The workers' park / wake protocol (src/sched/worker.cpp: worker_main's idle path,
// begin_search / end_search, park, leave_sleepers, notify_one, unpark), transcribed
// step by step onto instrumented atomics. worker.cpp itself cannot run here (it needs a
// pool, rings and std::mutex), so this is a model of its protocol, not its object code:
// keep the two in step. The injection queue is its count under a lock (what the
// protocol reads of it), the sleeper list's std::mutex a spin lock on a model atomic,
// and workers sleep on their `unparks` futex word (cpu_bound mode).
//
// The property: no lost wake-up. Work pushed by an outside thread is taken by some
// worker; the worker that takes the last item stops the pool as ~thread_pool does
// (stopping, then every worker unparked). A worker asleep while work waits and nobody
// else can take it leaves every model thread blocked: the checker's deadlock.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "checker.hpp"
#include "saturn/detail/atomic.hpp"

namespace {

using namespace saturn;

/// Switches that turn the transcription into a mutant.
struct variant {
  bool recheck_after_register = true;  ///< park() re-reads the queues after registering
  bool push_before_notify = true;      ///< a producer publishes the work, then notifies
};

struct spin_lock {
  detail::atomic<bool> held{false};
  void lock() {
    while (held.exchange(true, std::memory_order_acquire))
      detail::cpu_relax();
  }
  void unlock() { held.store(false, std::memory_order_release); }
};

constexpr int k_max_workers = 3;

struct pool_model {
  variant v;
  int n_workers = 1;
  int total = 0;  // items the producer pushes

  // injection_queue: a count under its lock; empty_hint() reads it without the lock.
  spin_lock inject_lock;
  detail::atomic<std::uint32_t> inject_len{0};
  detail::atomic<std::uint32_t> consumed{0};

  detail::atomic<std::uint32_t> num_searching{0};
  detail::atomic<std::uint32_t> num_sleeping{0};
  spin_lock sleepers_lock;
  int sleepers[k_max_workers] = {};  // under sleepers_lock
  int n_sleepers = 0;
  detail::atomic<bool> stopping{false};

  struct worker {
    detail::atomic<std::uint32_t> unparks{0};
    bool searching = false;  // owner only
  } workers[k_max_workers];

  void push() {
    inject_lock.lock();
    inject_len.store(inject_len.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    inject_lock.unlock();
  }
  bool take() {
    if (inject_len.load(std::memory_order_relaxed) == 0)  // empty_hint
      return false;
    inject_lock.lock();
    const std::uint32_t n = inject_len.load(std::memory_order_relaxed);
    if (n != 0)
      inject_len.store(n - 1, std::memory_order_relaxed);
    inject_lock.unlock();
    return n != 0;
  }
  bool has_visible_work() { return inject_len.load(std::memory_order_relaxed) != 0; }

  void unpark(int id) {
    workers[id].unparks.fetch_add(1, std::memory_order_release);
    detail::futex_wake(&workers[id].unparks, 1);
  }
  void notify_one() {
    detail::thread_fence(std::memory_order_seq_cst);
    if (num_searching.load(std::memory_order_relaxed) != 0 || num_sleeping.load(std::memory_order_relaxed) == 0)
      return;
    sleepers_lock.lock();
    if (n_sleepers == 0) {
      sleepers_lock.unlock();
      return;
    }
    const int id = sleepers[--n_sleepers];
    num_sleeping.fetch_sub(1, std::memory_order_seq_cst);
    num_searching.fetch_add(1, std::memory_order_seq_cst);
    sleepers_lock.unlock();
    unpark(id);
  }
  bool remove_sleeper_locked(int id) {
    for (int i = 0; i < n_sleepers; ++i) {
      if (sleepers[i] == id) {
        sleepers[i] = sleepers[--n_sleepers];
        num_sleeping.fetch_sub(1, std::memory_order_seq_cst);
        return true;
      }
    }
    return false;
  }

  void begin_search(worker& w) {
    if (w.searching)
      return;
    const std::uint32_t limit = static_cast<std::uint32_t>((n_workers + 1) / 2);
    if (num_searching.load(std::memory_order_relaxed) >= limit)
      return;
    num_searching.fetch_add(1, std::memory_order_seq_cst);
    w.searching = true;
  }
  void end_search(worker& w) {
    if (!w.searching)
      return;
    w.searching = false;
    if (num_searching.fetch_sub(1, std::memory_order_seq_cst) == 1)
      notify_one();
  }
  void leave_sleepers(int id) {
    worker& w = workers[id];
    sleepers_lock.lock();
    (void)remove_sleeper_locked(id);
    sleepers_lock.unlock();
    if (const std::uint32_t n = w.unparks.exchange(0, std::memory_order_acq_rel); n != 0) {
      w.searching = true;
      if (n > 1)
        num_searching.fetch_sub(n - 1, std::memory_order_seq_cst);
    }
  }
  void park(int id) {
    worker& w = workers[id];
    sleepers_lock.lock();
    sleepers[n_sleepers++] = id;
    num_sleeping.fetch_add(1, std::memory_order_seq_cst);
    sleepers_lock.unlock();
    detail::thread_fence(std::memory_order_seq_cst);
    const bool work = v.recheck_after_register && has_visible_work();
    if (!work && !stopping.load(std::memory_order_seq_cst) && w.unparks.load(std::memory_order_acquire) == 0) {
      while (w.unparks.load(std::memory_order_acquire) == 0 && !stopping.load(std::memory_order_acquire))
        detail::futex_wait(&w.unparks, 0);
    }
    leave_sleepers(id);
  }
  /// Runs an item; the worker that ran the last one stops the pool (~thread_pool).
  void run_item() {
    if (consumed.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(total)) {
      stopping.store(true, std::memory_order_seq_cst);
      for (int i = 0; i < n_workers; ++i)
        unpark(i);
    }
  }
  /// worker_main with spin_before_park_us = 0: one look round, then park.
  void worker_main(int id) {
    worker& w = workers[id];
    while (!stopping.load(std::memory_order_relaxed)) {
      if (take()) {
        end_search(w);
        run_item();
        continue;
      }
      begin_search(w);
      if (take()) {
        end_search(w);
        run_item();
        continue;
      }
      if (w.searching) {
        w.searching = false;
        if (num_searching.fetch_sub(1, std::memory_order_seq_cst) == 1 && has_visible_work())
          notify_one();
      }
      park(id);
    }
  }
  /// An outside thread posting work (thread_pool::post: push, then notify_one).
  void producer() {
    for (int i = 0; i < total; ++i) {
      if (v.push_before_notify) {
        push();
        notify_one();
      } else {
        notify_one();
        push();
      }
    }
  }
};

model::report check_protocol(variant v, int workers, int items, int bound) {
  model::options opt;
  opt.preemption_bound = bound;
  return model::explore(opt, [&](model::execution& ex) {
    auto p = std::make_shared<pool_model>();
    p->v = v;
    p->n_workers = workers;
    p->total = items;
    for (int i = 0; i < workers; ++i)
      ex.spawn([p, i] { p->worker_main(i); });
    ex.spawn([p] { p->producer(); });
    if (!ex.run())
      return;
    model::check(p->consumed.load() == static_cast<std::uint32_t>(items), "an item was not run");
    model::check(p->inject_len.load() == 0, "an item was left queued");
  });
}

void print(const char* name, const model::report& r) {
  std::printf("%s: %zu executions, up to %zu scheduling points each, %s\n", name, r.executions, r.max_depth,
              r.ok ? (r.complete ? "bound explored" : "INCOMPLETE") : r.failure.c_str());
  if (!r.ok)
    std::printf("the failing schedule, thread by thread:\n%s\n", r.schedule.c_str());
}

TEST(ModelParkWake, OneWorkerTwoItemsBound3) {
  const auto r = check_protocol({}, 1, 2, 3);
  print("park/wake, 1 worker, 2 items", r);
  EXPECT_TRUE(r.ok) << r.failure << "\n" << r.schedule;
  EXPECT_TRUE(r.complete);
}

TEST(ModelParkWake, TwoWorkersTwoItemsBound2) {
  const auto r = check_protocol({}, 2, 2, 2);
  print("park/wake, 2 workers, 2 items", r);
  EXPECT_TRUE(r.ok) << r.failure << "\n" << r.schedule;
  EXPECT_TRUE(r.complete);
}

TEST(ModelParkWakeMutant, NoRecheckAfterRegisteringIsCaught) {
  variant v;
  v.recheck_after_register = false;
  const auto r = check_protocol(v, 1, 1, 2);
  print("mutant: no re-check after registering as a sleeper", r);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.failure.rfind("deadlock", 0), 0u) << r.failure;
}

TEST(ModelParkWakeMutant, NotifyBeforePushIsCaught) {
  variant v;
  v.push_before_notify = false;
  const auto r = check_protocol(v, 1, 1, 2);
  print("mutant: notify before the push", r);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.failure.rfind("deadlock", 0), 0u) << r.failure;
}

}  // namespace
