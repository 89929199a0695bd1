// Links against an installed saturn: a callback NOP on an event loop, a task run on the
// runtime, and a gzip and brotli round trip (so zlib and brotli must be on the link line).
// Prints "ok" and exits 0 when all completed.
#include <saturn/saturn.hpp>

#include <cstdio>
#include <string>

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
  const std::string text(4096, 'a');
  for (auto coding : {saturn::http::content_coding::gzip, saturn::http::content_coding::br}) {
    auto packed = saturn::http::compress(coding, text);
    auto unpacked = packed ? saturn::http::decompress(coding, *packed) : packed;
    if (!unpacked || *unpacked != text) {
      std::fprintf(stderr, "consumer: %s round trip failed\n", std::string(saturn::http::coding_name(coding)).c_str());
      return 1;
    }
  }
  std::puts("ok");
  return 0;
}
