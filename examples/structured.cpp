// Structured concurrency in a few lines: when_all collects, when_any races (and cancels
// the loser in the kernel), a task_group runs children that cannot outlive it.
#include <saturn/saturn.hpp>
#include <saturn/task/task_group.hpp>
#include <saturn/task/when_all.hpp>
#include <saturn/task/when_any.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using saturn::task;

namespace {

task<int> slow_square(int x) {
  (void)co_await saturn::sleep_for(std::chrono::milliseconds(x));
  co_return x * x;
}

task<std::string> greeting() { co_return "hello"; }

// Waits for a byte on `fd`: an io_uring read that stays in the kernel until data or a cancel.
task<std::string> read_line(int fd) {
  std::byte buf[64];
  auto n = co_await saturn::read(fd, buf);
  if (!n)
    co_return "read ended: " + n.err().message();
  co_return std::string(reinterpret_cast<const char*>(buf), *n);
}

task<> give_up_after(std::chrono::milliseconds d) { (void)co_await saturn::sleep_for(d); }

task<int> demo(int pipe_read_end) {
  // when_all: both run concurrently; values come back in argument order.
  auto [sq, hi] = co_await saturn::when_all(slow_square(3), greeting());
  std::printf("when_all: %d %s\n", sq, hi.c_str());

  std::vector<task<int>> batch;
  for (int i = 1; i <= 4; ++i)
    batch.push_back(slow_square(i));
  std::vector<int> squares = co_await saturn::when_all(std::move(batch));
  std::printf("when_all(vector): %d %d %d %d\n", squares[0], squares[1], squares[2], squares[3]);

  // when_any: nobody writes to the pipe, so the timer wins; the read is cancelled in the
  // kernel and has ended before when_any returns.
  auto race = co_await saturn::when_any(read_line(pipe_read_end), give_up_after(5ms));
  std::printf("when_any: winner %zu (%s)\n", race.index(), race.index() == 1 ? "the timer" : "the read");

  // task_group: children run alongside the body; run() returns when all have ended.
  int total = 0;
  co_await saturn::task_group::run([&](saturn::task_group& g) -> task<> {
    for (int i = 1; i <= 3; ++i)
      g.spawn([](int k, int& sum) -> task<> { sum += co_await slow_square(k); }(i, total));
    co_return;
  });
  std::printf("task_group: sum of squares %d\n", total);
  co_return (sq == 9 && squares[3] == 16 && race.index() == 1 && total == 14) ? 0 : 1;
}

}  // namespace

int main() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return 1;
  saturn::runtime rt;
  const int status = rt.block_on(demo(fds[0]));
  ::close(fds[0]);
  ::close(fds[1]);
  return status;
}
