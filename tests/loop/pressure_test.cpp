// Ten times the ring's depth in flight at once: the SQ fills (get_sqe flushes it) and the
// CQ overflows (the kernel keeps the rest, the loop pulls it in). Every completion must be
// delivered exactly once. Also completions that arrive while callbacks submit more.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::loop_options;

class pressure : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts(unsigned entries, unsigned cq_entries = 0) const {
    return loop_options{.entries = entries, .cq_entries = cq_entries, .defer_taskrun = GetParam()};
  }
};

void expect_all_once(const std::vector<int>& calls, const char* what) {
  int missing = 0;
  int repeated = 0;
  for (int c : calls) {
    missing += c == 0;
    repeated += c > 1;
  }
  EXPECT_EQ(missing, 0) << what << ": completions lost";
  EXPECT_EQ(repeated, 0) << what << ": completions delivered twice";
}

TEST_P(pressure, ten_times_depth_nops) {
  event_loop loop(opts(64));
  ASSERT_EQ(loop.sq_entries(), 64u);
  constexpr int n = 640;
  std::vector<int> calls(n, 0);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    loop.nop([&, i](int r) {
      ++calls[static_cast<std::size_t>(i)];
      bad += r != 0;
    });
  EXPECT_EQ(loop.in_flight(), static_cast<std::size_t>(n));
  watchdog dog(20s, "640 NOPs were not all delivered");
  loop.run();
  expect_all_once(calls, "nop");
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(loop.in_flight(), 0u);
  EXPECT_EQ(loop.stats().completions, static_cast<std::uint64_t>(n));
}

TEST_P(pressure, ten_times_depth_nops_with_the_smallest_cq) {
  event_loop loop(opts(64, 64));  // CQ as small as the SQ: ~9 CQs' worth overflow
  constexpr int n = 640;
  std::vector<int> calls(n, 0);
  for (int i = 0; i < n; ++i)
    loop.nop([&, i](int) { ++calls[static_cast<std::size_t>(i)]; });
  watchdog dog(20s, "640 NOPs through a 64-entry CQ were not all delivered");
  loop.run();
  expect_all_once(calls, "nop");
}

TEST_P(pressure, ten_times_depth_timeouts) {
  event_loop loop(opts(64, 64));
  constexpr int n = 640;
  std::vector<int> calls(n, 0);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    loop.timeout(std::chrono::microseconds(500 + (i % 7) * 300), [&, i](int r) {
      ++calls[static_cast<std::size_t>(i)];
      bad += r != 0;
    });
  watchdog dog(20s, "640 kernel timeouts were not all delivered");
  loop.run();
  expect_all_once(calls, "timeout");
  EXPECT_EQ(bad, 0);
}

TEST_P(pressure, ten_times_depth_pipe_reads) {
  event_loop loop(opts(64, 64));
  pipe_fds p;
  constexpr int n = 640;
  std::vector<int> calls(n, 0);
  std::vector<int> results(n, 0);
  auto bufs = std::make_unique<char[]>(n);
  for (int i = 0; i < n; ++i)
    loop.read(p.r, &bufs[static_cast<std::size_t>(i)], 1, file_pos, [&, i](int r) {
      ++calls[static_cast<std::size_t>(i)];
      results[static_cast<std::size_t>(i)] = r;
    });
  // All reads are parked (most already in the kernel); the data comes afterwards.
  std::string data(n, '\0');
  for (int i = 0; i < n; ++i)
    data[static_cast<std::size_t>(i)] = static_cast<char>('a' + i % 26);
  loop.defer([&] { ASSERT_EQ(::write(p.w, data.data(), data.size()), static_cast<ssize_t>(n)); });
  watchdog dog(20s, "640 pipe reads were not all delivered");
  loop.run();
  expect_all_once(calls, "read");
  EXPECT_TRUE(std::all_of(results.begin(), results.end(), [](int r) { return r == 1; }));
  std::string got(bufs.get(), n);
  std::sort(got.begin(), got.end());
  std::sort(data.begin(), data.end());
  EXPECT_EQ(got, data) << "every byte read exactly once";
}

TEST_P(pressure, mixed_reads_timeouts_and_nops) {
  event_loop loop(opts(16, 16));
  pipe_fds p;
  constexpr int n = 600;
  std::vector<int> calls(n, 0);
  auto bufs = std::make_unique<char[]>(n);
  int reads = 0;
  for (int i = 0; i < n; ++i) {
    auto cb = [&, i](int) { ++calls[static_cast<std::size_t>(i)]; };
    switch (i % 3) {
      case 0:
        loop.nop(cb);
        break;
      case 1:
        loop.timeout(std::chrono::microseconds(i), cb);
        break;
      default:
        loop.read(p.r, &bufs[static_cast<std::size_t>(i)], 1, file_pos, cb);
        ++reads;
    }
  }
  std::string data(static_cast<std::size_t>(reads), 'r');
  loop.after(1ms, [&] { ASSERT_EQ(::write(p.w, data.data(), data.size()), static_cast<ssize_t>(data.size())); });
  watchdog dog(20s, "mixed operations were not all delivered");
  loop.run();
  expect_all_once(calls, "mixed");
}

// Each completion submits two more NOPs until `n` have been submitted, so SQEs are
// handed out (and the 8-deep SQ flushed) from inside the reap loop while CQEs keep
// arriving and the 16-deep CQ overflows.
TEST_P(pressure, submitting_from_inside_callbacks) {
  event_loop loop(opts(8, 16));
  constexpr int n = 20'000;
  std::vector<int> calls(n, 0);
  int submitted = 0;
  struct spawner {
    event_loop* loop;
    std::vector<int>* calls;
    int* submitted;
    int id;
    void operator()(int r) const {
      EXPECT_EQ(r, 0);
      ++(*calls)[static_cast<std::size_t>(id)];
      for (int k = 0; k < 2 && *submitted < n; ++k) {
        const int next = (*submitted)++;
        loop->nop(spawner{loop, calls, submitted, next});
      }
    }
  };
  for (int k = 0; k < 8; ++k) {
    const int id = submitted++;
    loop.nop(spawner{&loop, &calls, &submitted, id});
  }
  watchdog dog(30s, "NOPs submitted from callbacks were not all delivered");
  loop.run();
  EXPECT_EQ(submitted, n);
  expect_all_once(calls, "nested nop");
  EXPECT_EQ(loop.stats().completions, static_cast<std::uint64_t>(n));
}

// Reads submitted from callbacks of other reads, while a writer keeps the pipe fed: the
// pipe stream must come out in order and complete.
TEST_P(pressure, chained_reads_keep_the_stream_in_order) {
  event_loop loop(opts(4, 8));
  pipe_fds p;
  constexpr int total = 50'000;
  std::string sent(total, '\0');
  for (int i = 0; i < total; ++i)
    sent[static_cast<std::size_t>(i)] = static_cast<char>(i * 7 % 251);
  std::string received;
  char buf[97];
  struct reader {
    event_loop* loop;
    int fd;
    char* buf;
    std::string* out;
    void operator()(int r) const {
      ASSERT_GE(r, 0);
      if (r == 0)
        return;  // EOF
      out->append(buf, static_cast<std::size_t>(r));
      loop->read(fd, buf, 97, file_pos, *this);
    }
  };
  loop.read(p.r, buf, sizeof buf, file_pos, reader{&loop, p.r, buf, &received});
  std::size_t off = 0;
  struct writer {
    event_loop* loop;
    pipe_fds* p;
    const std::string* data;
    std::size_t* off;
    void operator()(int r) const {
      ASSERT_GT(r, 0);
      *off += static_cast<std::size_t>(r);
      if (*off == data->size()) {
        p->close_write();
        return;
      }
      const std::size_t chunk = std::min<std::size_t>(4096, data->size() - *off);
      loop->write(p->w, data->data() + *off, static_cast<unsigned>(chunk), file_pos, *this);
    }
  };
  loop.write(p.w, sent.data(), 4096, file_pos, writer{&loop, &p, &sent, &off});
  watchdog dog(20s, "the pipe stream stalled");
  loop.run();
  EXPECT_EQ(received.size(), sent.size());
  EXPECT_TRUE(received == sent) << "the stream was reordered or corrupted";
}

INSTANTIATE_TEST_SUITE_P(modes, pressure, ::testing::Bool(), mode_name);

}  // namespace
