// One sample of a sched scenario: the tasks, the submitters, the timing.
//
// Per task, as the peers: body -> relaxed fetch_add on hits -> latency into its own slot ->
// latch count-down (the last one stamps the end and wakes the submitter). The submit time
// is read just before each post. External submitters post through their own
// thread_pool::submitter (registered before the timed region); nested children are posted
// with thread_pool::post from inside the parent, i.e. onto the worker's LIFO slot / deque.
#include <algorithm>
#include <barrier>
#include <optional>
#include <thread>

#include "scenarios.hpp"

namespace sched_bench {
namespace {

inline void do_work(const work& w, int i) {
  switch (w.kind) {
    case work_kind::noop:
      break;
    case work_kind::spin:
      bench::busy_wait_ns(w.ns);
      break;
    case work_kind::mixed:
      if (i % 5 == 0)
        bench::busy_wait_ns(1000 * k_us);
      break;
  }
}

inline void leaf(shared_state* s, int i, std::int64_t submitted, work w) {
  do_work(w, i);
  s->hits.v.fetch_add(1, std::memory_order_relaxed);
  s->finish(i, submitted);
}

/// An external thread's way into the pool: its own registered submitter queue, or the
/// pool's injection queue (--submit inject). Registration happens outside the timed region.
class poster {
 public:
  explicit poster(shared_state* s) : m_pool(s->pool) {
    if (s->path == submit_path::submitter)
      m_sub.emplace(m_pool->register_submitter());
  }
  template <class F>
  void post(F&& f) {
    if (m_sub)
      m_sub->post(std::forward<F>(f));
    else
      m_pool->post(std::forward<F>(f));
  }

 private:
  saturn::thread_pool* m_pool;
  std::optional<saturn::thread_pool::submitter> m_sub;
};

/// Posts leaves [lo, hi) from the calling external thread; returns the first submit time.
std::int64_t submit_leaves(poster& p, shared_state* s, int lo, int hi, work w) {
  std::int64_t first = 0;
  for (int i = lo; i < hi; ++i) {
    const std::int64_t t = bench::now_ns();
    if (i == lo)
      first = t;
    p.post([s, i, t, w] { leaf(s, i, t, w); });
  }
  return first;
}

void parent(shared_state* s, int i, std::int64_t submitted, int parents, int children) {
  s->hits.v.fetch_add(1, std::memory_order_relaxed);
  const int base = parents + i * children;
  for (int k = 0; k < children; ++k) {
    const std::int64_t tc = bench::now_ns();
    const int idx = base + k;
    // On a worker: post() puts the child in this worker's LIFO slot (the one it displaces
    // goes to the worker's deque, stealable).
    s->pool->post([s, idx, tc] { leaf(s, idx, tc, work{work_kind::noop, 0}); });
  }
  s->finish(i, submitted);
}

}  // namespace

sample run_sample(shared_state* s, const scenario& sc) {
  s->hits.v.store(0, std::memory_order_relaxed);
  std::fill(s->lat.begin(), s->lat.begin() + sc.tasks, 0);
  std::int64_t start = 0;
  std::int64_t end = 0;
  switch (sc.shp) {
    case shape::flat:
      s->latch.reset(sc.tasks);
      if (sc.submitters == 1) {
        poster p(s);
        start = submit_leaves(p, s, 0, sc.tasks, sc.body);
        end = s->latch.wait();
      } else {
        const int per = sc.tasks / sc.submitters;
        std::vector<std::int64_t> firsts(static_cast<std::size_t>(sc.submitters));
        std::barrier<> go(sc.submitters);
        std::vector<std::thread> threads;
        for (int k = 0; k < sc.submitters; ++k) {
          threads.emplace_back([&, k] {
            poster p(s);            // registered before the release
            go.arrive_and_wait();   // all submitters start together
            firsts[static_cast<std::size_t>(k)] = submit_leaves(p, s, k * per, (k + 1) * per, sc.body);
          });
        }
        for (auto& t : threads)
          t.join();
        end = s->latch.wait();
        start = *std::min_element(firsts.begin(), firsts.end());
      }
      break;
    case shape::nested: {
      s->latch.reset(sc.tasks);
      const int parents = sc.parents;
      const int children = sc.children;
      poster p(s);
      for (int i = 0; i < parents; ++i) {
        const std::int64_t t = bench::now_ns();
        if (i == 0)
          start = t;
        p.post([s, i, t, parents, children] { parent(s, i, t, parents, children); });
      }
      end = s->latch.wait();
      break;
    }
    case shape::burst: {
      poster p(s);
      s->latch.reset(sc.half);
      start = submit_leaves(p, s, 0, sc.half, sc.body);
      s->latch.wait();
      std::this_thread::sleep_for(std::chrono::nanoseconds(sc.gap_ns));
      s->latch.reset(sc.half);
      submit_leaves(p, s, sc.half, 2 * sc.half, sc.body);
      end = s->latch.wait();
      break;
    }
  }
  sample out;
  out.wall_s = static_cast<double>(end - start) / 1e9;
  out.lat.assign(s->lat.begin(), s->lat.begin() + sc.tasks);
  out.checksum = s->hits.v.load(std::memory_order_relaxed);
  return out;
}

}  // namespace sched_bench
