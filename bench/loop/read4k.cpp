// read_4k_fixed_vs_plain: 500,000 one-at-a-time 4 KiB reads of one page-cached page,
// from a registered (fixed) buffer and from the same buffer unregistered; contents checked.
#include <saturn/ext/submit.hpp>
#include <saturn/loop/event_loop.hpp>

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "scenarios.hpp"

namespace loop_bench {
namespace {
constexpr int k_ops = 500'000;
constexpr unsigned k_page = 4096;

struct reader {
  saturn::event_loop* loop;
  int fd;
  char* buf;
  bool fixed;
  int left = k_ops;
  std::uint64_t bytes = 0;
  void next() {
    auto done = [this](int res) {
      if (res != static_cast<int>(k_page)) [[unlikely]]
        bench::fail("read completed with " + std::to_string(res));
      bytes += static_cast<unsigned>(res);
      if (--left > 0)
        next();
    };
    if (fixed)
      loop->read_fixed(fd, buf, k_page, 0, 0, done);
    else
      loop->read(fd, buf, k_page, 0, done);
  }
};
}  // namespace

void read_4k_fixed_vs_plain(const bench::args& a) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr && *dir != 0 ? dir : "/tmp") + "/saturn-bench-loop-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0)
    bench::fail("mkstemp in " + path + ": " + std::strerror(errno));
  ::unlink(path.c_str());
  static char pattern[k_page];
  for (unsigned i = 0; i < k_page; ++i)
    pattern[i] = static_cast<char>(i * 7 + 1);
  if (::pwrite(fd, pattern, k_page, 0) != static_cast<ssize_t>(k_page))
    bench::fail("pwrite");
  char* buf = static_cast<char*>(std::aligned_alloc(k_page, k_page));
  if (::pread(fd, buf, k_page, 0) != static_cast<ssize_t>(k_page))
    bench::fail("pread");  // the page is cached from here on

  saturn::event_loop loop(saturn::loop_options{.entries = 8});
  ::iovec iov{buf, k_page};
  if (auto ec = saturn::ext::register_buffers(loop, {&iov, 1}))
    bench::fail("register_buffers: " + ec.message());
  std::vector<double> fixed_walls, plain_walls;
  std::uint64_t bytes = 0;
  for (int k = 0; k < a.warmup + a.samples; ++k) {
    for (bool fixed : {true, false}) {
      std::memset(buf, 0, k_page);
      reader r{&loop, fd, buf, fixed};
      const std::int64_t t0 = bench::now_ns();
      r.next();
      loop.run();
      const std::int64_t t1 = bench::now_ns();
      if (std::memcmp(buf, pattern, k_page) != 0)
        bench::fail(std::string(fixed ? "fixed" : "plain") + " read returned wrong data");
      bench::do_not_optimize(r.bytes);
      if (k >= a.warmup) {
        (fixed ? fixed_walls : plain_walls).push_back(double(t1 - t0) / 1e9);
        bytes += r.bytes;
      }
    }
  }
  const std::uint64_t expect = std::uint64_t(k_ops) * k_page * 2 * static_cast<unsigned>(a.samples);
  if (bytes != expect)
    bench::fail("read_4k checksum " + std::to_string(bytes));
  const double wf = bench::median(fixed_walls), wp = bench::median(plain_walls);
  bench::record("loop", "read_4k_fixed_vs_plain", 1)
      .str("setup", loop.defer_taskrun() ? "defer" : "other")
      .num("ops", k_ops)
      .num("bytes", static_cast<int>(k_page))
      .num("wall_s_fixed", wf)
      .num("wall_s_plain", wp)
      .num("ns_per_op_fixed", wf * 1e9 / k_ops)
      .num("ns_per_op_plain", wp * 1e9 / k_ops)
      .num("checksum", std::uint64_t(k_ops) * k_page * 2)
      .emit();
  ::close(fd);
  std::free(buf);
}


}  // namespace loop_bench
