// saturn-bench-forkjoin: the `forkjoin` suite of docs/workloads.md (recursive fork-join
// on the work-stealing pool): tree_sum_4m, quicksort_10m, matmul_512, written once in
// bench/peers/common/cxx/forkjoin_work.hpp over saturn::join. Each sample runs inside a
// task on the pool (block_on); the input is rebuilt before each sample, untimed; every
// sample's answer is checked against a sequential reference.
#include "harness.hpp"

#include <saturn/saturn.hpp>

#include <algorithm>
#include <string>

#include "../peers/common/cxx/forkjoin_work.hpp"

namespace {

struct saturn_join {
  template <class F, class G>
  void operator()(F&& f, G&& g) const {
    saturn::join(f, g);
  }
};

template <class F>
saturn::task<std::invoke_result_t<F&>> in_task(F f) {
  co_return f();
}

struct sample {
  double wall_s;
  std::uint64_t checksum;
  std::uint64_t joins;
};

void report(const char* scenario, int threads, const std::vector<sample>& s, std::uint64_t expect) {
  std::vector<double> walls;
  for (const sample& x : s) {
    if (x.checksum != expect)
      bench::fail(std::string(scenario) + " checksum " + std::to_string(x.checksum) + " != " + std::to_string(expect));
    walls.push_back(x.wall_s);
  }
  const double w = bench::median(walls);
  const std::uint64_t tasks = 2 * s.front().joins;
  bench::record("forkjoin", scenario, threads)
      .num("tasks", static_cast<unsigned long long>(tasks))
      .num("wall_s", w)
      .num("ns_per_task", w * 1e9 / double(tasks))
      .num("checksum", static_cast<unsigned long long>(expect))
      .emit();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn fork-join benchmarks (docs/workloads.md, suite forkjoin)"};
  bench::args a;
  bool cpu_bound = false;
  bench::add_common_flags(app, a, {"tree_sum_4m", "quicksort_10m", "matmul_512"});
  app.add_flag("--cpu-bound", cpu_bound, "pool_mode::cpu_bound workers (default: io mode, what a server has)");
  CLI11_PARSE(app, argc, argv);
  saturn::pool_options opts;
  opts.threads = static_cast<unsigned>(a.threads);
  opts.mode = cpu_bound ? saturn::pool_mode::cpu_bound : saturn::pool_mode::io;
  saturn::thread_pool pool(opts);
  saturn_join join;

  if (a.wants("tree_sum_4m")) {
    const std::vector<forkjoin::node> tree = forkjoin::build_tree();
    const std::uint64_t expect = forkjoin::tree_expected();
    const std::uint64_t joins = forkjoin::tree_joins();
    auto s = bench::run_samples<sample>(a, [&] {
      return pool.block_on(in_task([&] {
        const std::int64_t t0 = bench::now_ns();
        const std::uint64_t sum = forkjoin::tree_sum(tree.data(), join);
        return sample{double(bench::now_ns() - t0) / 1e9, sum, joins};
      }));
    });
    report("tree_sum_4m", a.threads, s, expect);
  }
  if (a.wants("quicksort_10m")) {
    const std::vector<std::uint32_t> input = forkjoin::sort_input();
    std::vector<std::uint32_t> ref = input;
    std::sort(ref.begin(), ref.end());
    const std::uint64_t expect = forkjoin::sort_checksum(ref);
    auto s = bench::run_samples<sample>(a, [&] {
      std::vector<std::uint32_t> v = input;
      return pool.block_on(in_task([&] {
        const std::int64_t t0 = bench::now_ns();
        const std::uint64_t joins = forkjoin::par_sort(v.data(), v.size(), join);
        const double wall = double(bench::now_ns() - t0) / 1e9;
        return sample{wall, forkjoin::sort_checksum(v), joins};
      }));
    });
    report("quicksort_10m", a.threads, s, expect);
  }
  if (a.wants("matmul_512")) {
    forkjoin::matrices m = forkjoin::mat_input();
    const std::uint64_t expect = forkjoin::mat_expected(m);
    auto s = bench::run_samples<sample>(a, [&] {
      std::fill(m.c.begin(), m.c.end(), 0.0);
      return pool.block_on(in_task([&] {
        const std::int64_t t0 = bench::now_ns();
        const std::uint64_t joins = forkjoin::mat_mul(m.c.data(), m.a.data(), m.b.data(), forkjoin::k_mat_n, join);
        const double wall = double(bench::now_ns() - t0) / 1e9;
        return sample{wall, forkjoin::mat_checksum(m.c), joins};
      }));
    });
    report("matmul_512", a.threads, s, expect);
  }
  return 0;
}
