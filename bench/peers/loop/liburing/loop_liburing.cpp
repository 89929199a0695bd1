// loop-liburing: the `loop` suite (docs/workloads.md) on raw liburing, the floor an
// io_uring runtime is measured against. One thread, one ring per scenario.
//
//   loop-liburing [--samples N] [--warmup N] [--scenario NAME[,NAME]]
//                 [--setup defer|coop|plain] [--file PATH] [--threads 1]
//
// Scenarios (each sample does the whole count; the median sample is reported):
//   nop_batched_128         128 NOPs prepared, one io_uring_enter that submits them and
//                           waits for all 128, the 128 CQEs reaped in one pass;
//                           100,000 rounds.
//   nop_pingpong            one NOP, one io_uring_enter (submit + wait 1), one CQE;
//                           1,000,000 times.
//   timer_churn             1,000,000 IORING_OP_TIMEOUTs of 0..1 ms (uniform, fixed
//                           seed), armed 128 per enter; each enter also picks up the
//                           timers that fired meanwhile; done when all have fired.
//   read_4k_fixed_vs_plain  4 KiB read at offset 0 of a 4 KiB file in the page cache,
//                           one at a time: READ_FIXED from a registered buffer, then
//                           READ into the same (unregistered) buffer; 500,000 each.
//
// --setup: defer = SINGLE_ISSUER|DEFER_TASKRUN (default, what a one-ring-per-thread
// program uses on Linux >= 6.1), coop = SINGLE_ISSUER|COOP_TASKRUN, plain = none.
// The ring fd is registered whenever the kernel allows it ("+ring_fd" in `setup`).
#include <liburing.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "peer_bench.hpp"

namespace {

constexpr const char* kUsage =
    "loop-liburing [--samples N] [--warmup N] [--scenario NAME[,NAME]] "
    "[--setup defer|coop|plain] [--file PATH]";

constexpr unsigned kBatch = 128;
constexpr int kBatchRounds = 100'000;
constexpr int kPingpongOps = 1'000'000;
constexpr int kTimers = 1'000'000;
constexpr std::uint64_t kTimerSpanNs = 1'000'000;
constexpr int kReadOps = 500'000;
constexpr int kPage = 4096;

[[noreturn]] void fail(const char* what, int err) {
  std::fprintf(stderr, "loop-liburing: %s: %s\n", what, std::strerror(err < 0 ? -err : err));
  std::exit(1);
}

/// One ring, set up the way --setup asks; closed when it goes out of scope.
class ring {
 public:
  ring(const std::string& setup, unsigned entries, unsigned cq_entries = 0) {
    io_uring_params p{};
    if (setup == "defer") p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (setup == "coop") p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
    if (cq_entries != 0) {
      p.flags |= IORING_SETUP_CQSIZE;
      p.cq_entries = cq_entries;
    }
    if (int rc = io_uring_queue_init_params(entries, &m_ring, &p); rc < 0)
      fail("io_uring_queue_init_params", rc);
    m_fd_registered = io_uring_register_ring_fd(&m_ring) == 1;
  }
  ~ring() { io_uring_queue_exit(&m_ring); }
  ring(const ring&) = delete;
  ring& operator=(const ring&) = delete;

  io_uring* get() { return &m_ring; }
  bool fd_registered() const { return m_fd_registered; }

  io_uring_sqe* sqe() {
    io_uring_sqe* s = io_uring_get_sqe(&m_ring);
    if (s == nullptr) fail("io_uring_get_sqe (submission queue full)", EBUSY);
    return s;
  }

  /// Reaps every CQE that is there; `check` sees each one. Returns how many.
  template <class Check>
  unsigned reap_all(Check check) {
    unsigned head = 0, n = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&m_ring, head, cqe) {
      check(cqe);
      ++n;
    }
    io_uring_cq_advance(&m_ring, n);
    return n;
  }

  /// One enter that submits what is prepared and waits for `want` completions.
  void submit_wait(unsigned want) {
    int rc = io_uring_submit_and_wait(&m_ring, want);
    if (rc < 0) fail("io_uring_submit_and_wait", rc);
  }

  /// Waits for, checks and retires exactly one CQE.
  template <class Check>
  void take_one(Check check) {
    io_uring_cqe* cqe = nullptr;
    if (int rc = io_uring_peek_cqe(&m_ring, &cqe); rc < 0) fail("io_uring_peek_cqe", rc);
    check(cqe);
    io_uring_cqe_seen(&m_ring, cqe);
  }

 private:
  io_uring m_ring{};
  bool m_fd_registered = false;
};

struct sample {
  double wall_s;
  std::uint64_t done;  // operations (or timers, or bytes) seen completed
};

sample nop_batched(ring& r) {
  std::uint64_t done = 0;
  const std::int64_t t0 = peer::now_ns();
  for (int round = 0; round < kBatchRounds; ++round) {
    for (unsigned k = 0; k < kBatch; ++k) {
      io_uring_sqe* s = r.sqe();
      io_uring_prep_nop(s);
      io_uring_sqe_set_data64(s, k);
    }
    r.submit_wait(kBatch);
    unsigned n = r.reap_all([](io_uring_cqe* c) {
      if (c->res != 0) fail("NOP completion", c->res);
    });
    if (n != kBatch) fail("fewer than 128 NOP completions after one enter", EIO);
    done += n;
  }
  return {double(peer::now_ns() - t0) / 1e9, done};
}

sample nop_pingpong(ring& r) {
  std::uint64_t done = 0;
  const std::int64_t t0 = peer::now_ns();
  for (int i = 0; i < kPingpongOps; ++i) {
    io_uring_sqe* s = r.sqe();
    io_uring_prep_nop(s);
    io_uring_sqe_set_data64(s, std::uint64_t(i));
    r.submit_wait(1);
    r.take_one([&](io_uring_cqe* c) {
      if (c->res != 0 || c->user_data != std::uint64_t(i)) fail("NOP completion", c->res ? c->res : EIO);
      ++done;
    });
  }
  return {double(peer::now_ns() - t0) / 1e9, done};
}

/// splitmix64: the timer deadlines, the same sequence in every sample.
struct deadlines {
  std::uint64_t state = 0x5EED'0000'0000'0001ull;
  std::uint64_t next_ns() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (z ^ (z >> 31)) % (kTimerSpanNs + 1);
  }
};

sample timer_churn(ring& r) {
  // The kernel reads each timespec when the SQE is submitted, so one batch's worth of
  // slots is enough.
  static __kernel_timespec spec[kBatch];
  deadlines gen;
  auto expired = [](io_uring_cqe* c) {
    if (c->res != -ETIME) fail("timeout completion", c->res);
  };
  std::uint64_t armed = 0, fired = 0;
  const std::int64_t t0 = peer::now_ns();
  while (armed < std::uint64_t(kTimers)) {
    unsigned batch = unsigned(std::min<std::uint64_t>(kBatch, kTimers - armed));
    for (unsigned k = 0; k < batch; ++k) {
      spec[k].tv_sec = 0;
      spec[k].tv_nsec = (long long)gen.next_ns();
      io_uring_sqe* s = r.sqe();
      io_uring_prep_timeout(s, &spec[k], 0, 0);
      io_uring_sqe_set_data64(s, armed + k);
    }
    int rc = io_uring_submit_and_get_events(r.get());
    if (rc != int(batch)) fail("io_uring_submit_and_get_events", rc < 0 ? rc : EIO);
    armed += batch;
    fired += r.reap_all(expired);
  }
  while (fired < armed) {
    io_uring_cqe* c = nullptr;
    if (int rc = io_uring_wait_cqe(r.get(), &c); rc < 0) fail("io_uring_wait_cqe", rc);
    fired += r.reap_all(expired);
  }
  return {double(peer::now_ns() - t0) / 1e9, fired};
}

sample read_4k(ring& r, int fd, char* buf, bool fixed) {
  std::uint64_t bytes = 0;
  const std::int64_t t0 = peer::now_ns();
  for (int i = 0; i < kReadOps; ++i) {
    io_uring_sqe* s = r.sqe();
    if (fixed)
      io_uring_prep_read_fixed(s, fd, buf, kPage, 0, 0);
    else
      io_uring_prep_read(s, fd, buf, kPage, 0);
    r.submit_wait(1);
    r.take_one([&](io_uring_cqe* c) {
      if (c->res != kPage) fail("4 KiB read", c->res < 0 ? c->res : EIO);
      bytes += std::uint64_t(c->res);
    });
  }
  return {double(peer::now_ns() - t0) / 1e9, bytes};
}

/// Runs warm-up + measured samples of `one`; returns the measured walls, checking that
/// every sample completed `expect`.
template <class One>
std::vector<double> measure(const peer::options& o, const char* name, std::uint64_t expect, One one) {
  std::vector<double> walls;
  for (int k = 0; k < o.warmup + o.samples; ++k) {
    sample s = one();
    if (s.done != expect) {
      std::fprintf(stderr, "loop-liburing: %s: %llu completed, expected %llu\n", name,
                   (unsigned long long)s.done, (unsigned long long)expect);
      std::exit(1);
    }
    if (k >= o.warmup) walls.push_back(s.wall_s);
  }
  return walls;
}

peer::json_line head(const char* scenario, const std::string& setup, const ring& r) {
  peer::json_line j;
  j.add("suite", "loop").add("scenario", scenario).add("runtime", "liburing").add("threads", 1);
  j.add("setup", setup + (r.fd_registered() ? "+ring_fd" : ""));
  return j;
}

/// The file read_4k_fixed_vs_plain reads: --file, else an unlinked file in $TMPDIR.
int open_read_file(const std::string& path) {
  int fd = -1;
  if (!path.empty()) {
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) fail(path.c_str(), errno);
    return fd;
  }
  const char* dir = std::getenv("TMPDIR");
  std::string name = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/loop-liburing-XXXXXX";
  fd = mkstemp(name.data());
  if (fd < 0) fail("mkstemp", errno);
  unlink(name.c_str());
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  peer::options o = peer::parse_options(argc, argv, kUsage, {"setup", "file"});
  peer::check_scenarios(o, kUsage, {"nop_batched_128", "nop_pingpong", "timer_churn", "read_4k_fixed_vs_plain"});
  if (!o.positional.empty()) peer::usage_error(kUsage, "unexpected argument " + o.positional[0]);
  if (o.threads != 1 && o.threads != peer::allowed_cpus())
    std::fprintf(stderr, "loop-liburing: one thread by definition; --threads %d ignored\n", o.threads);
  const std::string setup = o.value_of("setup", "defer");
  if (setup != "defer" && setup != "coop" && setup != "plain")
    peer::usage_error(kUsage, "--setup must be defer, coop or plain");

  if (o.wants("nop_batched_128")) {
    ring r(setup, kBatch);
    const std::uint64_t ops = std::uint64_t(kBatch) * kBatchRounds;
    double wall = peer::median(measure(o, "nop_batched_128", ops, [&] { return nop_batched(r); }));
    head("nop_batched_128", setup, r)
        .add("ops", (unsigned long long)ops)
        .add("wall_s", wall, 6)
        .add("ops_per_sec", double(ops) / wall, 0)
        .add("ns_per_op", wall * 1e9 / double(ops), 1)
        .add("checksum", (unsigned long long)ops)
        .print();
  }
  if (o.wants("nop_pingpong")) {
    ring r(setup, 8);
    double wall = peer::median(measure(o, "nop_pingpong", kPingpongOps, [&] { return nop_pingpong(r); }));
    head("nop_pingpong", setup, r)
        .add("ops", kPingpongOps)
        .add("wall_s", wall, 6)
        .add("ops_per_sec", kPingpongOps / wall, 0)
        .add("ns_per_op", wall * 1e9 / kPingpongOps, 1)
        .add("checksum", kPingpongOps)
        .print();
  }
  if (o.wants("timer_churn")) {
    // A CQ large enough that timers firing between two enters never overflow it.
    ring r(setup, kBatch, 65536);
    double wall = peer::median(measure(o, "timer_churn", kTimers, [&] { return timer_churn(r); }));
    head("timer_churn", setup, r)
        .add("timers", kTimers)
        .add("wall_s", wall, 6)
        .add("ns_per_timer", wall * 1e9 / kTimers, 1)
        .add("checksum", kTimers)
        .print();
  }
  if (o.wants("read_4k_fixed_vs_plain")) {
    int fd = open_read_file(o.value_of("file", ""));
    std::vector<char> want(kPage);
    for (int i = 0; i < kPage; ++i) want[std::size_t(i)] = char('a' + i % 26);
    if (pwrite(fd, want.data(), kPage, 0) != kPage) fail("pwrite", errno);
    auto* buf = static_cast<char*>(std::aligned_alloc(kPage, kPage));
    if (pread(fd, buf, kPage, 0) != kPage) fail("pread", errno);  // the page is cached now
    ring r(setup, 8);
    iovec iov{buf, std::size_t(kPage)};
    if (int rc = io_uring_register_buffers(r.get(), &iov, 1); rc < 0) fail("io_uring_register_buffers", rc);
    const std::uint64_t bytes = std::uint64_t(kReadOps) * kPage;
    auto variant = [&](bool fixed) {
      std::memset(buf, 0, kPage);
      sample s = read_4k(r, fd, buf, fixed);
      if (std::memcmp(buf, want.data(), kPage) != 0) fail("read returned other bytes than written", EIO);
      return s;
    };
    // Interleaved per sample (fixed, then plain), so drift hits both alike.
    std::vector<double> fixed_walls, plain_walls;
    for (int k = 0; k < o.warmup + o.samples; ++k) {
      sample f = variant(true), p = variant(false);
      if (f.done != bytes || p.done != bytes) fail("read_4k_fixed_vs_plain: short total", EIO);
      if (k < o.warmup) continue;
      fixed_walls.push_back(f.wall_s);
      plain_walls.push_back(p.wall_s);
    }
    double wf = peer::median(fixed_walls), wp = peer::median(plain_walls);
    head("read_4k_fixed_vs_plain", setup, r)
        .add("ops", kReadOps)
        .add("bytes", kPage)
        .add("wall_s_fixed", wf, 6)
        .add("wall_s_plain", wp, 6)
        .add("ns_per_op_fixed", wf * 1e9 / kReadOps, 1)
        .add("ns_per_op_plain", wp * 1e9 / kReadOps, 1)
        .add("checksum", (unsigned long long)(2 * bytes))
        .print();
    std::free(buf);
    close(fd);
  }
  return 0;
}
