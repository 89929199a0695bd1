// Tier C in a few lines: describe work as a pipeline, then run the same description
// three ways — pure, with a callback (tier A), and awaited in a task (tier B).
#include <saturn/saturn.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace fx = saturn::effect;
using namespace std::chrono_literals;

int main() {
  int status = 0;
  auto check = [&status](bool ok, const char* what) {
    std::printf("%s: %s\n", what, ok ? "ok" : "FAILED");
    status |= ok ? 0 : 1;
  };

  // 1. A pure pipeline folds into straight-line code; evaluate() runs it on the stack.
  auto price = fx::just(40) | fx::then([](int x) { return x + 2; }) | fx::then([](int x) { return x * 10; });
  check(*fx::evaluate(std::move(price)) == 420, "pure map chain = 420");

  // 2. With a loop: a nop through the ring, a timeout around a read that never completes
  //    (the read is cancelled in the kernel), a retried flaky step. Callbacks: tier A.
  saturn::event_loop loop;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return 1;
  char byte = 0;
  auto guarded_read = fx::read(fds[0], std::as_writable_bytes(std::span<char>(&byte, 1))) | fx::with_timeout(20ms) |
                      fx::upon_error([](const fx::failure& f) {
                        std::printf("  read gave up: %s\n", f.message().c_str());
                        return std::size_t{0};
                      });
  fx::start(std::move(guarded_read), loop,
            [&](fx::outcome<std::size_t> o) { check(o.has_value() && *o == 0, "read with a 20 ms timeout"); });
  int attempts = 0;
  auto flaky = fx::nop() | fx::let_value([&attempts] {
                 ++attempts;
                 return fx::just_result(attempts < 3 ? saturn::result<int>(saturn::errno_error(-EAGAIN, "flaky"))
                                                     : saturn::result<int>(attempts));
               }) |
               fx::retry({.max_attempts = 5, .backoff = 1ms});
  fx::start(std::move(flaky), loop, [&](fx::outcome<int> o) { check(o.has_value() && *o == 3, "retry: third attempt"); });
  loop.run();

  // 3. The same kind of pipeline awaited inside a task (tier B): its state lives in the
  //    task's frame and the task's stop token cancels it.
  saturn::runtime rt;
  int both = rt.block_on([]() -> saturn::task<int> {
    auto pair = fx::when_all(fx::nop() | fx::then([] { return 1; }), fx::sleep_for(1ms) | fx::then([] { return 2; }));
    auto r = co_await std::move(pair);
    co_return r ? std::get<0>(*r) + std::get<1>(*r) : -1;
  }());
  check(both == 3, "when_all in a task = 3");

  ::close(fds[0]);
  ::close(fds[1]);
  return status;
}
