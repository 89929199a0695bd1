// sched-tbb: the `sched` suite (docs/workloads.md) on oneTBB.
//
//   sched-tbb [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//             [--nested task_group|enqueue]
//
// The pool: one task_arena of N slots, none reserved for application threads, and a
// global_control that lets N workers exist (its limit counts the main thread too, so
// N + 1). External submitters are std::threads that never enter the arena; they hand
// each task over with task_arena::enqueue, oneTBB's fire-and-forget entry from
// outside. (task_group::run from such a thread would run the task in that thread's own
// implicit arena, i.e. not on the pool.)
//
// Nested children (nested_fanout_4x) are started from inside the parent, on its
// worker: by default with task_group::run on one shared task_group (the worker's own
// deque, stealable by the others: what TBB code does for child work); with
// `--nested enqueue` through this_task_arena::enqueue (the arena's FIFO), reported
// with "variant":"nested_enqueue".
//
// Every task, in order: its body (the busy loop, if any); one relaxed fetch_add on the
// shared `hits` counter; its latency (now - its submit time) into its own slot; the
// completion count-down. The task that counts down to zero stamps the end time and
// wakes the waiting submitter. Wall = end - the earliest first submit.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "peer_bench.hpp"

namespace {

constexpr const char* kUsage =
    "sched-tbb [--threads N] [--samples N] [--warmup N] [--scenario NAME[,NAME]] "
    "[--nested task_group|enqueue]";

constexpr std::int64_t kUs = 1000;

enum class shape { flat, nested, burst };

struct scenario {
  const char* name;
  int tasks;
  shape kind;
  int submitters;        // flat: external threads, tasks split evenly
  std::int64_t spin_ns;  // busy loop per task (0: no-op)
  bool mixed;            // mixed_fast_slow: 1 ms busy loop when i % 5 == 0
};

const scenario kScenarios[] = {
    {"flood_1m", 1'000'000, shape::flat, 1, 0, false},
    {"contended_spawn_8x", 100'000, shape::flat, 8, 0, false},
    {"cpu_work_10us", 10'000, shape::flat, 1, 10 * kUs, false},
    {"cpu_work_100us", 2'000, shape::flat, 1, 100 * kUs, false},
    {"contended_cpu_10us", 10'000, shape::flat, 4, 10 * kUs, false},
    {"nested_fanout_4x", 10'000, shape::nested, 1, 0, false},
    {"burst_drain_burst", 4'000, shape::burst, 1, 50 * kUs, false},
    {"mixed_fast_slow", 5'000, shape::flat, 1, 0, true},
};
constexpr int kParents = 2'000, kChildren = 4;  // nested_fanout_4x
constexpr auto kBurstGap = std::chrono::milliseconds(10);

/// A counter alone on its cache lines (the hot shared words must not share one).
struct alignas(128) padded_counter {
  std::atomic<std::int64_t> value{0};
};

/// What the tasks of one sample share; reached through a plain pointer, no refcount.
struct shared_state {
  padded_counter hits;
  padded_counter remaining;
  std::atomic<bool> done{false};
  std::int64_t end_ns = 0;
  std::vector<std::int64_t> latency;
  tbb::task_group* children = nullptr;  // nested, --nested task_group
  bool nested_enqueue = false;

  void arm(int count) {
    done.store(false, std::memory_order_relaxed);
    remaining.value.store(count, std::memory_order_relaxed);
  }

  /// The no-op every task does.
  void hit() { hits.value.fetch_add(1, std::memory_order_relaxed); }

  /// The last two steps of every task: its latency, then the count-down.
  void finish(int i, std::int64_t submitted) {
    const std::int64_t now = peer::now_ns();
    latency[std::size_t(i)] = now - submitted;
    // ordering: acq_rel so the last task sees every other task's latency store, and
    // the waiter (acquire on `done`) sees them all too.
    if (remaining.value.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      end_ns = now;
      done.store(true, std::memory_order_release);
      done.notify_all();
    }
  }

  /// Blocks the submitter until the armed count reaches zero; returns the end time.
  std::int64_t wait() {
    while (!done.load(std::memory_order_acquire)) done.wait(false, std::memory_order_acquire);
    return end_ns;
  }
};

void body(const scenario& sc, int i) {
  if (sc.mixed) {
    if (i % 5 == 0) peer::spin_for_ns(1000 * kUs);
  } else if (sc.spin_ns > 0) {
    peer::spin_for_ns(sc.spin_ns);
  }
}

/// Submits tasks [from, to) from the calling (external) thread; returns the first
/// submit time.
std::int64_t submit_range(tbb::task_arena& arena, shared_state* st, const scenario& sc, int from, int to) {
  std::int64_t first = 0;
  for (int i = from; i < to; ++i) {
    const std::int64_t t = peer::now_ns();
    if (i == from) first = t;
    const scenario* s = &sc;
    arena.enqueue([st, s, i, t] {
      body(*s, i);
      st->hit();
      st->finish(i, t);
    });
  }
  return first;
}

void spawn_child(shared_state* st, int index) {
  const std::int64_t t = peer::now_ns();
  auto child = [st, index, t] {
    st->hit();
    st->finish(index, t);
  };
  if (st->nested_enqueue)
    tbb::this_task_arena::enqueue(child);
  else
    st->children->run(child);
}

struct sample {
  double wall_s;
  std::int64_t checksum;
  std::vector<std::int64_t> latency;
};

sample run_sample(tbb::task_arena& arena, shared_state* st, const scenario& sc) {
  st->hits.value.store(0, std::memory_order_relaxed);
  std::int64_t start = 0, end = 0;
  if (sc.kind == shape::flat && sc.submitters == 1) {
    st->arm(sc.tasks);
    start = submit_range(arena, st, sc, 0, sc.tasks);
    end = st->wait();
  } else if (sc.kind == shape::flat) {
    st->arm(sc.tasks);
    const int each = sc.tasks / sc.submitters;
    std::vector<std::int64_t> first(std::size_t(sc.submitters), 0);
    std::atomic<int> waiting{sc.submitters};
    std::vector<std::thread> threads;
    for (int k = 0; k < sc.submitters; ++k) {
      threads.emplace_back([&, k] {
        // Released together: every submitter spins until all have started.
        waiting.fetch_sub(1, std::memory_order_acq_rel);
        while (waiting.load(std::memory_order_acquire) > 0) std::this_thread::yield();
        first[std::size_t(k)] = submit_range(arena, st, sc, k * each, (k + 1) * each);
      });
    }
    for (auto& t : threads) t.join();
    end = st->wait();
    start = *std::min_element(first.begin(), first.end());
  } else if (sc.kind == shape::nested) {
    st->arm(sc.tasks);
    for (int p = 0; p < kParents; ++p) {
      const std::int64_t t = peer::now_ns();
      if (p == 0) start = t;
      arena.enqueue([st, p, t] {
        // The parent's own no-op first, then its children, then it completes.
        st->hit();
        for (int c = 0; c < kChildren; ++c) spawn_child(st, kParents + p * kChildren + c);
        st->finish(p, t);
      });
    }
    end = st->wait();
    if (!st->nested_enqueue) st->children->wait();  // all ran already; resets the group
  } else {  // burst
    const int half = sc.tasks / 2;
    st->arm(half);
    start = submit_range(arena, st, sc, 0, half);
    st->wait();
    std::this_thread::sleep_for(kBurstGap);
    st->arm(half);
    submit_range(arena, st, sc, half, sc.tasks);
    end = st->wait();
  }
  sample out;
  out.wall_s = double(end - start) / 1e9;
  out.checksum = st->hits.value.load(std::memory_order_relaxed);
  out.latency.assign(st->latency.begin(), st->latency.begin() + sc.tasks);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  peer::options o = peer::parse_options(argc, argv, kUsage, {"nested"});
  std::vector<std::string_view> names;
  for (const auto& sc : kScenarios) names.push_back(sc.name);
  peer::check_scenarios(o, kUsage, names);
  if (!o.positional.empty()) peer::usage_error(kUsage, "unexpected argument " + o.positional[0]);
  const std::string nested = o.value_of("nested", "task_group");
  if (nested != "task_group" && nested != "enqueue") peer::usage_error(kUsage, "--nested must be task_group or enqueue");

  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, std::size_t(o.threads) + 1);
  tbb::task_arena arena(o.threads, /*reserved_for_masters=*/0);
  arena.initialize();
  tbb::task_group children;
  shared_state st;
  st.latency.assign(1'000'000, 0);
  st.children = &children;
  st.nested_enqueue = nested == "enqueue";

  for (const auto& sc : kScenarios) {
    if (!o.wants(sc.name)) continue;
    std::vector<sample> kept;
    std::vector<double> rates, walls;
    for (int k = 0; k < o.warmup + o.samples; ++k) {
      sample s = run_sample(arena, &st, sc);
      if (s.checksum != sc.tasks) {
        std::fprintf(stderr, "sched-tbb: %s: checksum %lld, expected %d\n", sc.name, (long long)s.checksum, sc.tasks);
        return 1;
      }
      if (k < o.warmup) continue;
      std::fprintf(stderr, "# tbb %s sample %zu: %.6f s\n", sc.name, kept.size(), s.wall_s);
      walls.push_back(s.wall_s);
      rates.push_back(sc.tasks / s.wall_s);
      kept.push_back(std::move(s));
    }
    sample& mid = kept[peer::median_position(rates)];
    std::sort(mid.latency.begin(), mid.latency.end());
    peer::json_line j;
    j.add("suite", "sched").add("scenario", sc.name).add("runtime", "tbb");
    if (st.nested_enqueue && sc.kind == shape::nested) j.add("variant", "nested_enqueue");
    j.add("threads", o.threads)
        .add("tasks", sc.tasks)
        .add("wall_s", peer::median(walls), 6)
        .add("ops_per_sec", peer::median(rates), 0)
        .add("p50_us", peer::nearest_rank(mid.latency, 50) / 1e3, 3)
        .add("p95_us", peer::nearest_rank(mid.latency, 95) / 1e3, 3)
        .add("p99_us", peer::nearest_rank(mid.latency, 99) / 1e3, 3)
        .add("checksum", (long long)mid.checksum)
        .print();
  }
  children.wait();
  return 0;
}
