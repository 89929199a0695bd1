// Tier B in one page: coroutines on the single-threaded runtime.
//
//   block_on     runs a task to completion on this thread and returns its value
//   spawn        starts a task that runs on its own; its join_handle gives the result
//   sleep_for    suspends the task (a timer in the loop, no thread blocks)
//   with_timeout runs a task (or awaits any awaitable) with a deadline; on expiry the
//                task is cancelled (its I/O is cancelled in the kernel) and the result is
//                std::errc::timed_out
//   read/write   pipe I/O awaited in direct style; errors come back as values
//
// Exits 0 when everything behaved as described.
#include <saturn/saturn.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace std::chrono_literals;

namespace {

std::span<std::byte> as_buffer(std::string& s) { return std::as_writable_bytes(std::span<char>(s.data(), s.size())); }

/// A worker: waits a little, then reports its square.
saturn::task<int> square_later(int x) {
  (void)co_await saturn::sleep_for(std::chrono::milliseconds(x));  // result<void>: only a cancel fails it
  co_return x * x;
}

/// Reads one message from a pipe. A failed read (e.g. cancelled by a deadline) is passed
/// up as an error value, which is how with_timeout tells "timed out" from "finished".
saturn::task<saturn::result<std::string>> read_message(int fd) {
  std::string buf(64, '\0');
  saturn::result<std::size_t> n = co_await saturn::read(fd, as_buffer(buf));
  if (!n)
    co_return n.err();  // e.g. "read: Operation canceled"
  buf.resize(*n);
  co_return buf;
}

saturn::task<int> main_task(int read_fd, int write_fd) {
  int failures = 0;

  // 1. spawn three workers, then join them (they run concurrently: ~3 ms in total, not 6)
  // (saturn::spawn starts them on the runtime this task runs on)
  std::vector<saturn::join_handle<int>> workers;
  for (int x = 1; x <= 3; ++x)
    workers.push_back(saturn::spawn(square_later(x)));
  int sum = 0;
  for (auto& w : workers)
    sum += co_await std::move(w);
  std::printf("sum of squares from spawned tasks: %d\n", sum);
  failures += sum == 14 ? 0 : 1;

  // 2. a pipe read with a deadline, and a writer that answers in time
  auto writer = saturn::spawn([](int fd) -> saturn::task<> {
    (void)co_await saturn::sleep_for(1ms);
    std::string msg = "hello from a spawned writer";
    (void)co_await saturn::write(fd, std::as_bytes(std::span<const char>(msg.data(), msg.size())));
  }(write_fd));
  // the task returns result<std::string>, and so does with_timeout: a value, the task's own
  // error, or timed_out
  auto got = co_await saturn::with_timeout(500ms, read_message(read_fd));
  co_await std::move(writer);
  if (got)
    std::printf("read in time: \"%s\"\n", got->c_str());
  failures += (got && *got == "hello from a spawned writer") ? 0 : 1;

  // 3. the same read with nobody writing: the deadline wins and the read is cancelled
  auto late = co_await saturn::with_timeout(5ms, read_message(read_fd));
  if (!late)
    std::printf("no writer: %s\n", late.err().message().c_str());  // "with_timeout: Connection timed out"
  failures += (!late && late.err() == std::errc::timed_out) ? 0 : 1;

  co_return failures;
}

}  // namespace

int main() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return 1;
  int failures = 0;
  {
    saturn::runtime rt;  // the loop lives on this thread
    failures = rt.block_on(main_task(fds[0], fds[1]));
  }
  ::close(fds[0]);
  ::close(fds[1]);
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
