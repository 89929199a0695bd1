// Links against an installed saturn: a callback NOP on an event loop and a task run on
// the runtime. Prints "ok" and exits 0 when both completed.
#include <saturn/saturn.hpp>

#include <cstdio>

namespace {
saturn::task<int> answer() { co_return 42; }
}  // namespace

int main() {
  saturn::event_loop loop;
  int res = -1;
  loop.nop([&](int r) { res = r; });
  loop.run();
  saturn::runtime rt;
  const int value = rt.block_on(answer());
  if (res != 0 || value != 42) {
    std::fprintf(stderr, "consumer: nop %d, task %d\n", res, value);
    return 1;
  }
  std::puts("ok");
  return 0;
}
