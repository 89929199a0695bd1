// Tier A in a few lines: submit operations with callables, run the loop.
#include <saturn/loop.hpp>  // event_loop and its callback tier

#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

int main() {
  saturn::event_loop loop;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return 1;
  static const char msg[] = "hello from the ring";
  char buf[64] = {};
  int status = 1;
  loop.write(fds[1], msg, sizeof msg, 0, [&](int res) {
    std::printf("wrote %d bytes\n", res);
    loop.read(fds[0], buf, sizeof buf, 0, [&](int n) {
      std::printf("read %d bytes: %s\n", n, buf);
      status = n == static_cast<int>(sizeof msg) ? 0 : 1;
    });
  });
  loop.after(std::chrono::milliseconds(1), [] { std::puts("timer fired after 1 ms"); });
  loop.run();
  ::close(fds[0]);
  ::close(fds[1]);
  return status;
}
