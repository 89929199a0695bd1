// saturn-bench-rpc: in-process unary gRPC calls (issue #27 item 5, the rpc suite's
// `inproc_unary`; the suite's network figures come from saturn-arena, see
// scripts/bench_lib/rpc.py).
//
//   inproc_unary      saturn::grpc::local_method<SumRequest, SumReply> on
//                     benchmark.BenchmarkService/GetSum (the method saturn-arena serves:
//                     result = a + b), called N times (default 10,000,000) in a row from
//                     one task on a runtime, `co_await sum(in, out)` — the two-argument
//                     call, which makes its own empty call_context (two coroutine frames:
//                     the call's and the method's). Every call's a is the loop counter, so
//                     no call can be folded into another; its status must be OK and its
//                     result a + b, summed into the checksum, which must equal
//                     sum(i + 7) over the calls. bench::do_not_optimize on the reply after
//                     every call (the DoNotOptimize barrier). ns_per_call = wall / N;
//                     cpu_ns_per_call = the calling thread's own CPU time / N (the same
//                     on a quiet machine; on a busy one wall time counts other processes'
//                     time slices, the thread's CPU time does not).
//   inproc_unary_ctx  the same with a call_context of the caller's passed in (one frame).
//
// One thread: an in-process call runs on the caller's worker; nothing crosses threads.
#include <saturn/grpc.hpp>
#include <saturn/saturn.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "harness.hpp"
#include "saturn-arena/benchmark.pb.h"

namespace {

using saturn::task;
namespace grpc = saturn::grpc;
using sum_method = grpc::local_method<benchmark::SumRequest, benchmark::SumReply>;

std::int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct sample_result {
  double wall_s;
  double cpu_s;  // the calling thread's own CPU time
  std::int64_t checksum;
  std::int64_t bad;  // calls whose status was not OK
};

task<sample_result> calls(const sum_method& sum, std::int64_t n, bool with_ctx) {
  benchmark::SumRequest in;
  benchmark::SumReply out;
  in.set_b(7);
  grpc::call_context ctx(sum_method::empty_request());
  std::int64_t checksum = 0, bad = 0;
  const std::int64_t c0 = thread_cpu_ns();
  const std::int64_t t0 = bench::now_ns();
  for (std::int64_t i = 0; i < n; ++i) {
    in.set_a(static_cast<std::int32_t>(i & 0x3fffffff));
    grpc::status st;
    if (with_ctx)
      st = co_await sum(in, out, ctx);
    else
      st = co_await sum(in, out);
    bench::do_not_optimize(out);
    bad += st.ok() ? 0 : 1;
    checksum += out.result();
  }
  const std::int64_t t1 = bench::now_ns();
  const std::int64_t c1 = thread_cpu_ns();
  co_return sample_result{static_cast<double>(t1 - t0) / 1e9, static_cast<double>(c1 - c0) / 1e9, checksum, bad};
}

void run(const bench::args& a, const std::string& scenario, std::int64_t n) {
  grpc::service svc;
  svc.unary<benchmark::SumRequest, benchmark::SumReply>(
      "benchmark.BenchmarkService/GetSum",
      [](const benchmark::SumRequest& in, benchmark::SumReply& out, grpc::call_context&) -> task<grpc::status> {
        out.set_result(in.a() + in.b());
        co_return grpc::status::success();
      });
  const sum_method sum(svc, "benchmark.BenchmarkService/GetSum");
  std::int64_t want = 0;
  for (std::int64_t i = 0; i < n; ++i)
    want += (i & 0x3fffffff) + 7;
  saturn::runtime rt;
  std::vector<double> ns, cpu_ns;
  std::int64_t checksum = 0;
  for (int k = 0; k < a.warmup + a.samples; ++k) {
    const sample_result r = rt.block_on(calls(sum, n, scenario == "inproc_unary_ctx"));
    if (r.bad != 0)
      bench::fail(scenario + ": " + std::to_string(r.bad) + " calls did not return OK");
    if (r.checksum != want)
      bench::fail(scenario + ": checksum " + std::to_string(r.checksum) + " != " + std::to_string(want));
    checksum = r.checksum;
    if (k >= a.warmup) {
      const double per = r.wall_s * 1e9 / static_cast<double>(n);
      std::fprintf(stderr, "# saturn %s sample %d: %.4f s, %.2f ns/call\n", scenario.c_str(), k - a.warmup,
                   r.wall_s, per);
      ns.push_back(per);
      cpu_ns.push_back(r.cpu_s * 1e9 / static_cast<double>(n));
    }
  }
  bench::record(std::string("rpc"), scenario, 1)
      .num("calls", n)
      .num("ns_per_call", bench::median(ns), 3)
      .num("cpu_ns_per_call", bench::median(cpu_ns), 3)
      .num("expected_checksum", want)
      .num("checksum", checksum)
      .emit();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn in-process gRPC call benchmark (grpc::local_method)"};
  bench::args a;
  std::int64_t n = 10'000'000;
  bench::add_common_flags(app, a, {"inproc_unary", "inproc_unary_ctx"});
  app.add_option("--calls", n, "calls per sample")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  for (const char* sc : {"inproc_unary", "inproc_unary_ctx"})
    if (a.wants(sc))
      run(a, sc, n);
  return 0;
}
