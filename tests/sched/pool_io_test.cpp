// thread_pool: io mode: nops, sleeps and pipe reads across workers, cross-worker wakes.
// Every parameterized test runs in both modes (io, cpu_bound) with 1, 2 and 4 workers unless
// it needs an event loop. Oracles: per-item run counters and values computed independently.
#include "loop/test_support.hpp"
#include "sched/pool_test_support.hpp"

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------
// io mode: I/O, timers and wakes across workers

class io_pool_test : public ::testing::TestWithParam<pool_config> {
 protected:
  void SetUp() override {
    if (GetParam().mode == pool_mode::io && !io_uring_unavailable().empty())
      GTEST_SKIP() << "io_uring is not usable here: " << io_uring_unavailable();
  }
};
INSTANTIATE_TEST_SUITE_P(io, io_pool_test,
                         ::testing::Values(pool_config{pool_mode::io, 1}, pool_config{pool_mode::io, 2},
                                           pool_config{pool_mode::io, 4}),
                         config_name);

using pipe_pair = saturn_test::pipe_fds;

std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>(mix(seed * 1'000'003 + i) & 0xff);
  return v;
}

std::uint64_t checksum(std::span<const std::byte> b) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::byte x : b)
    h = (h ^ static_cast<std::uint64_t>(x)) * 1099511628211ull;
  return h;
}

/// Reads exactly `total` bytes; the checksum, or 0 on an error or early EOF.
task<std::uint64_t> read_all(int fd, std::size_t total, std::atomic<int>* reader_tid) {
  if (reader_tid != nullptr)
    reader_tid->store(os_tid());
  std::vector<std::byte> buf(total);
  std::size_t got = 0;
  while (got < total) {
    auto r = co_await saturn::read(fd, std::span<std::byte>(buf).subspan(got));
    if (!r || *r == 0)
      co_return 0;
    got += *r;
  }
  co_return checksum(buf);
}

/// Writes `data` in chunks of `chunk` bytes, yielding and sleeping in between.
task<bool> write_all(int fd, std::vector<std::byte> data, std::size_t chunk) {
  std::size_t off = 0;
  while (off < data.size()) {
    const std::size_t n = std::min(chunk, data.size() - off);
    auto r = co_await saturn::write(fd, std::span<const std::byte>(data).subspan(off, n));
    if (!r)
      co_return false;
    off += *r;
    if (off % (4 * chunk) == 0)
      (void)co_await saturn::sleep_for(100us);
    else
      co_await saturn::yield();
  }
  co_return true;
}

task<int> nops_and_sleeps(int id) {
  int ok = 0;
  for (int i = 0; i < 40; ++i) {
    ok += (co_await saturn::nop()) ? 1 : 0;
    if (i % 8 == id % 8) {
      const auto d = std::chrono::microseconds(50 + (id * 37 + i) % 300);
      const auto t0 = saturn::clock::now();
      auto s = co_await saturn::sleep_for(d);
      if (s && saturn::clock::now() - t0 >= d)  // a sleep never ends early
        ++ok;
      else
        ok -= 1000;
    }
    co_await saturn::yield();
  }
  co_return ok;
}

task<std::int64_t> io_mix(thread_pool* pool, std::vector<int>* fds, std::size_t bytes) {
  // 64 tasks doing nops and sleeps; readers and writers of each pipe spawned apart, so they
  // run (and complete their I/O) on whichever workers pick them up
  std::vector<join_handle<int>> nops;
  for (int i = 0; i < 64; ++i)
    nops.push_back(pool->spawn(nops_and_sleeps(i)));
  const std::size_t pipes = fds->size() / 2;
  std::vector<join_handle<std::uint64_t>> readers;
  for (std::size_t p = 0; p < pipes; ++p)
    readers.push_back(pool->spawn(read_all((*fds)[2 * p], bytes, nullptr)));
  std::vector<join_handle<bool>> writers;
  for (std::size_t p = 0; p < pipes; ++p)
    writers.push_back(pool->spawn(write_all((*fds)[2 * p + 1], pattern(bytes, p), 256)));
  std::int64_t score = 0;
  for (auto& h : nops)
    score += co_await std::move(h);
  for (std::size_t p = 0; p < pipes; ++p) {
    const std::uint64_t sum = co_await std::move(readers[p]);
    const bool wrote = co_await std::move(writers[p]);
    if (wrote && sum == checksum(pattern(bytes, p)))
      score += 1'000'000;
  }
  co_return score;
}

TEST_P(io_pool_test, nops_sleeps_and_pipe_reads_across_workers) {
  thread_pool pool(options_for(GetParam()));
  constexpr std::size_t k_pipes = 16, k_bytes = 8192;
  std::vector<std::unique_ptr<pipe_pair>> pipes;
  std::vector<int> fds;
  for (std::size_t i = 0; i < k_pipes; ++i) {
    pipes.push_back(std::make_unique<pipe_pair>());
    fds.push_back(pipes.back()->r);
    fds.push_back(pipes.back()->w);
  }
  // each nop task: 40 nops + 5 sleeps
  const std::int64_t expected = 64 * (40 + 5) + std::int64_t{k_pipes} * 1'000'000;
  for (int round = 0; round < 3; ++round)
    EXPECT_EQ(pool.block_on(io_mix(&pool, &fds, k_bytes)), expected) << "round " << round;
}

task<bool> write_attempt(int fd, std::atomic<int>* reader_tid, std::atomic<int>* writer_tid, std::atomic<bool>* done,
                         std::vector<std::byte> data) {
  if (done->load())
    co_return false;
  if (os_tid() == reader_tid->load()) {
    // the reader's worker: hold it a little, so the next attempt lands on another one
    std::this_thread::sleep_for(2ms);
    co_return false;
  }
  if (done->exchange(true))
    co_return false;
  writer_tid->store(os_tid());
  std::size_t off = 0;
  while (off < data.size()) {
    auto r = co_await saturn::write(fd, std::span<const std::byte>(data).subspan(off));
    if (!r)
      co_return false;
    off += *r;
  }
  co_return true;
}

task<int> count_true(std::vector<join_handle<bool>> hs) {
  int n = 0;
  for (auto& h : hs)
    n += (co_await std::move(h)) ? 1 : 0;
  co_return n;
}

task<std::uint64_t> await_u64(join_handle<std::uint64_t> h) { co_return co_await std::move(h); }

// A task waits on a pipe read submitted to its worker's ring (and that worker parks in
// the ring); a task on another worker writes. The read's completion must wake the
// parked worker and the reader must finish.
TEST_P(io_pool_test, cross_worker_pipe_wake) {
  if (GetParam().threads < 2)
    GTEST_SKIP() << "needs two workers";
  thread_pool pool(options_for(GetParam()));
  for (int round = 0; round < 10; ++round) {
    pipe_pair p;
    std::atomic<int> reader_tid{0}, writer_tid{0};
    std::atomic<bool> done{false};
    const std::size_t bytes = 1000 + 100 * static_cast<std::size_t>(round);
    auto reader = pool.spawn(read_all(p.r, bytes, &reader_tid));
    ASSERT_TRUE(wait_until([&] { return reader_tid.load() != 0; }, 10'000ms * k_slow));
    std::this_thread::sleep_for(5ms);  // the read is in flight; its worker parks in its ring
    EXPECT_FALSE(reader.is_finished());
    std::vector<join_handle<bool>> attempts;
    const auto until = std::chrono::steady_clock::now() + 10s * k_slow;
    while (!done.load() && std::chrono::steady_clock::now() < until) {
      attempts.push_back(pool.spawn(write_attempt(p.w, &reader_tid, &writer_tid, &done, pattern(bytes, round))));
      std::this_thread::sleep_for(500us);
    }
    ASSERT_TRUE(done.load()) << "no write attempt ran on a worker other than the reader's";
    EXPECT_EQ(pool.block_on(await_u64(std::move(reader))), checksum(pattern(bytes, round))) << "round " << round;
    EXPECT_EQ(pool.block_on(count_true(std::move(attempts))), 1);
    EXPECT_NE(writer_tid.load(), reader_tid.load());
  }
}


/// Awaits `n` nops; counts the awaits that resumed on another thread than the one before.
task<int> nops_counting_moves(int n) {
  int moves = 0;
  int tid = os_tid();
  for (int i = 0; i < n; ++i) {
    auto r = co_await saturn::nop();
    if (!r)
      co_return -1;
    const int now = os_tid();
    moves += now != tid ? 1 : 0;
    tid = now;
  }
  co_return moves;
}

// Sleeps woken by the loop's timers, with nops between them so the worker is busy and its
// timers also fire between tasks (thread_pool fires due timers every few tasks).
task<int> sleeps_counting_moves(int n) {
  int moves = 0;
  int tid = os_tid();
  for (int i = 0; i < n; ++i) {
    auto s = saturn::sleep_for(std::chrono::microseconds(20 + i % 50));
    if (!co_await s)
      co_return -1;
    for (int k = 0; k < 4; ++k)
      if (!co_await saturn::nop())
        co_return -1;
    const int now = os_tid();
    moves += now != tid ? 1 : 0;
    tid = now;
  }
  co_return moves;
}

task<int> sum_moves(std::vector<join_handle<int>> hs) {
  int total = 0;
  for (auto& h : hs) {
    const int m = co_await std::move(h);
    if (m < 0)
      co_return -1;
    total += m;
  }
  co_return total;
}

// pin_io_wakeups (the default): a task woken by its own worker's ring stays on that
// worker, however idle the others are, so its next operation goes to the same ring. With
// it off the tasks still finish (stealing moves them, that is allowed).
TEST_P(io_pool_test, io_wakeups_stay_on_their_worker) {
  for (bool pin : {true, false}) {
    pool_options o = options_for(GetParam());
    o.pin_io_wakeups = pin;
    thread_pool pool(o);
    std::vector<join_handle<int>> hs;
    for (int t = 0; t < 8; ++t)
      hs.push_back(pool.spawn(nops_counting_moves(2000)));
    const int moves = pool.block_on(sum_moves(std::move(hs)));
    ASSERT_GE(moves, 0) << "a nop failed";
    if (pin) {
      EXPECT_EQ(moves, 0) << "tasks woken by their own ring moved to another worker";
    }
  }
}

// The same for wake-ups by the loop's timers, whether the timer fires in a turn of the
// loop or between tasks on a busy worker.
TEST_P(io_pool_test, timer_wakeups_stay_on_their_worker) {
  thread_pool pool(options_for(GetParam()));
  std::vector<join_handle<int>> hs;
  for (int t = 0; t < 8; ++t)
    hs.push_back(pool.spawn(sleeps_counting_moves(300 / k_slow)));
  const int moves = pool.block_on(sum_moves(std::move(hs)));
  ASSERT_GE(moves, 0) << "a sleep or a nop failed";
  EXPECT_EQ(moves, 0) << "tasks woken by their own loop's timers moved to another worker";
}

}  // namespace
