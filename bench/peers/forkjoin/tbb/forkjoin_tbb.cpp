// forkjoin-tbb: the `forkjoin` suite (docs/workloads.md) on oneTBB.
//
//   forkjoin-tbb [--threads N] [--samples N] [--warmup N] [--scenario tree_sum_4m,quicksort_10m,matmul_512]
//
// The workloads are saturn's own (bench/peers/common/cxx/forkjoin_work.hpp); a join is
// what a TBB user writes for fork-join with a task_group: `g.run(b); a(); g.wait();`.
// Everything runs inside a task_arena of N slots (main takes one, N-1 TBB workers the
// rest), as the spawn peer does.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "forkjoin_work.hpp"
#include "peer_bench.hpp"

namespace {

constexpr const char* kUsage =
    "forkjoin-tbb [--threads N] [--samples N] [--warmup N] [--scenario tree_sum_4m,quicksort_10m,matmul_512]";

struct tbb_join {
  template <class F, class G>
  void operator()(F&& f, G&& g) const {
    tbb::task_group group;
    group.run([&] { g(); });
    f();
    group.wait();
  }
};

struct sample {
  double wall_s;
  std::uint64_t checksum;
  std::uint64_t joins;
};

int report(const char* scenario, int threads, const std::vector<sample>& all, int warmup, std::uint64_t expect) {
  std::vector<double> walls;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (all[k].checksum != expect) {
      std::fprintf(stderr, "forkjoin-tbb: %s checksum %llu, expected %llu\n", scenario,
                   (unsigned long long)all[k].checksum, (unsigned long long)expect);
      return 1;
    }
    if (int(k) >= warmup) walls.push_back(all[k].wall_s);
  }
  const double wall = peer::median(walls);
  const long long tasks = 2 * (long long)all.front().joins;
  peer::json_line()
      .add("suite", "forkjoin")
      .add("scenario", scenario)
      .add("runtime", "tbb")
      .add("threads", threads)
      .add("tasks", tasks)
      .add("wall_s", wall, 6)
      .add("ns_per_task", wall * 1e9 / double(tasks), 2)
      .add("checksum", (long long)expect)
      .print();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  peer::options o = peer::parse_options(argc, argv, kUsage);
  peer::check_scenarios(o, kUsage, {"tree_sum_4m", "quicksort_10m", "matmul_512"});
  if (!o.positional.empty()) peer::usage_error(kUsage, "unexpected argument " + o.positional[0]);
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, std::size_t(o.threads));
  tbb::task_arena arena(o.threads, /*reserved_for_masters=*/1);
  tbb_join join;
  const int n = o.warmup + o.samples;
  int rc = 0;

  if (o.wants("tree_sum_4m")) {
    const std::vector<forkjoin::node> tree = forkjoin::build_tree();
    std::vector<sample> all;
    for (int k = 0; k < n; ++k)
      arena.execute([&] {
        const std::int64_t t0 = peer::now_ns();
        const std::uint64_t sum = forkjoin::tree_sum(tree.data(), join);
        all.push_back({double(peer::now_ns() - t0) / 1e9, sum, forkjoin::tree_joins()});
      });
    rc |= report("tree_sum_4m", o.threads, all, o.warmup, forkjoin::tree_expected());
  }
  if (o.wants("quicksort_10m")) {
    const std::vector<std::uint32_t> input = forkjoin::sort_input();
    std::vector<std::uint32_t> ref = input;
    std::sort(ref.begin(), ref.end());
    std::vector<sample> all;
    for (int k = 0; k < n; ++k) {
      std::vector<std::uint32_t> v = input;
      arena.execute([&] {
        const std::int64_t t0 = peer::now_ns();
        const std::uint64_t joins = forkjoin::par_sort(v.data(), v.size(), join);
        const double wall = double(peer::now_ns() - t0) / 1e9;
        all.push_back({wall, forkjoin::sort_checksum(v), joins});
      });
    }
    rc |= report("quicksort_10m", o.threads, all, o.warmup, forkjoin::sort_checksum(ref));
  }
  if (o.wants("matmul_512")) {
    forkjoin::matrices m = forkjoin::mat_input();
    const std::uint64_t expect = forkjoin::mat_expected(m);
    std::vector<sample> all;
    for (int k = 0; k < n; ++k) {
      std::fill(m.c.begin(), m.c.end(), 0.0);
      arena.execute([&] {
        const std::int64_t t0 = peer::now_ns();
        const std::uint64_t joins = forkjoin::mat_mul(m.c.data(), m.a.data(), m.b.data(), forkjoin::k_mat_n, join);
        const double wall = double(peer::now_ns() - t0) / 1e9;
        all.push_back({wall, forkjoin::mat_checksum(m.c), joins});
      });
    }
    rc |= report("matmul_512", o.threads, all, o.warmup, expect);
  }
  return rc;
}
