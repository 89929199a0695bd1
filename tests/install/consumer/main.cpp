// Links against an installed saturn: a callback NOP on an event loop and tasks run on
// the runtime, joined with when_all (saturn.hpp brings in every module). Prints "ok"
// and exits 0 when both completed.
#include <saturn/saturn.hpp>

#include <cstdio>
#include <tuple>

namespace {
saturn::task<int> answer() { co_return 42; }
saturn::task<int> sum_of_two() {
  auto both = co_await saturn::when_all(answer(), answer());
  co_return std::get<0>(both) + std::get<1>(both);
}
}  // namespace

int main() {
  saturn::event_loop loop;
  int res = -1;
  loop.nop([&](int r) { res = r; });
  loop.run();
  saturn::runtime rt;
  const int value = rt.block_on(sum_of_two());
  if (res != 0 || value != 84) {
    std::fprintf(stderr, "consumer: nop %d, tasks %d\n", res, value);
    return 1;
  }
  std::puts("ok");
  return 0;
}
