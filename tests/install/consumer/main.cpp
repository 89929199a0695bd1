// Links against an installed saturn: a callback NOP on an event loop, tasks run on the
// runtime joined with when_all (saturn.hpp brings in every module), a gzip and brotli
// round trip (so zlib and brotli must be on the link line), and net::resolve of a numeric
// host (no query, but its object file calls c-ares, so c-ares must be on the link line
// too). Prints "ok" and exits 0 when all completed.
#include <saturn/saturn.hpp>

#include <cstdio>
#include <string>
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
  const std::string text(4096, 'a');
  for (auto coding : {saturn::http::content_coding::gzip, saturn::http::content_coding::br}) {
    auto packed = saturn::http::compress(coding, text);
    auto unpacked = packed ? saturn::http::decompress(coding, *packed) : packed;
    if (!unpacked || *unpacked != text) {
      std::fprintf(stderr, "consumer: %s round trip failed\n", std::string(saturn::http::coding_name(coding)).c_str());
      return 1;
    }
  }
  auto addrs = rt.block_on(saturn::net::resolve("127.0.0.1", 80));
  if (!addrs || addrs->size() != 1 || (*addrs)[0].to_string() != "127.0.0.1:80") {
    std::fprintf(stderr, "consumer: resolve failed: %s\n", addrs ? "wrong answer" : addrs.err().message().c_str());
    return 1;
  }
  std::puts("ok");
  return 0;
}
