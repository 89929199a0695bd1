// Tasks talking through channels: a producer feeds a bounded channel (it waits whenever
// the workers fall behind), four workers square the numbers, a wait_group closes the
// results channel when the last worker is done, and main checks the sum.
#include <saturn/saturn.hpp>
#include <saturn/sync.hpp>

#include <cstdio>
#include <vector>

namespace {

constexpr long count = 10'000;

saturn::task<> produce(saturn::channel<long>& jobs) {
  for (long i = 1; i <= count; ++i)
    if (!co_await jobs.send(i))  // only fails once the channel is closed
      co_return;
  jobs.close();  // workers drain what is queued, then see "closed"
}

saturn::task<> work(saturn::channel<long>& jobs, saturn::channel<long>& results, saturn::wait_group& workers) {
  while (auto job = co_await jobs.receive())
    (void)co_await results.send(*job * *job);
  workers.done();
}

saturn::task<long> run() {
  saturn::channel<long> jobs(64);               // bounded: backpressure on the producer
  saturn::channel<long> results(saturn::unbounded);
  saturn::wait_group workers;

  std::vector<saturn::join_handle<void>> tasks;
  tasks.push_back(saturn::spawn(produce(jobs)));
  for (int w = 0; w < 4; ++w) {
    workers.add(1);
    tasks.push_back(saturn::spawn(work(jobs, results, workers)));
  }

  long sum = 0;
  auto closer = [](saturn::wait_group& wg, saturn::channel<long>& ch) -> saturn::task<> {
    (void)co_await wg.wait();
    ch.close();
  };
  tasks.push_back(saturn::spawn(closer(workers, results)));
  while (auto r = co_await results.receive())
    sum += *r;
  for (auto& t : tasks)
    co_await std::move(t);  // the channels live in this frame: outlive every task using them
  co_return sum;
}

}  // namespace

int main() {
  saturn::runtime rt;
  const long sum = rt.block_on(run());
  const long expected = count * (count + 1) * (2 * count + 1) / 6;
  std::printf("sum of squares 1..%ld = %ld (expected %ld)\n", count, sum, expected);
  return sum == expected ? 0 : 1;
}
