// The I/O awaitables of tier B: nop, read/write on pipes and files (a randomized sequence
// checked against an in-memory model of the file), readv/writev, the fixed-buffer forms,
// explicit cancel(), errors returned as values that name the operation, and
// kernel_timeout (expiry is success).
#include <gtest/gtest.h>
#include <saturn/ext/submit.hpp>
#include <saturn/saturn.hpp>
#include "task/task_test_util.hpp"

#include "loop/test_support.hpp"

#include <sys/uio.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::task;
using saturn_test::pipe_fds;
using saturn_test::temp_file;
using task_test::root_ctx;
using task_test::bytes;

std::span<const std::byte> cbytes(const std::string& s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST(task_io, nop_round_trips) {
  saturn::runtime rt;
  const int ok = rt.block_on([]() -> task<int> {
    int n = 0;
    for (int i = 0; i < 1000; ++i) {
      auto r = co_await saturn::nop();
      n += r.has_value() ? 1 : 0;
    }
    co_return n;
  }());
  EXPECT_EQ(ok, 1000);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
  EXPECT_GE(rt.loop().stats().completions, 1000u);
}

TEST(task_io, pipe_write_then_read) {
  saturn::runtime rt;
  pipe_fds p;
  const std::string got = rt.block_on([](int rfd, int wfd) -> task<std::string> {
    std::string msg = "hello through the ring";
    auto w = co_await saturn::write(wfd, cbytes(msg));
    EXPECT_TRUE(w.has_value());
    EXPECT_EQ(*w, msg.size());
    std::string buf(64, '\0');
    auto r = co_await saturn::read(rfd, bytes(buf));
    EXPECT_TRUE(r.has_value());
    buf.resize(r.has_value() ? *r : 0);
    co_return buf;
  }(p.r, p.w));
  EXPECT_EQ(got, "hello through the ring");
}

TEST(task_io, pipe_read_waits_for_a_later_writer_and_sees_eof) {
  saturn::runtime rt;
  pipe_fds p;
  const std::string got = rt.block_on([](pipe_fds* pp) -> task<std::string> {
    auto* root = co_await root_ctx();
    auto reader = saturn::spawn_in(*root, [](int rfd) -> task<std::string> {
      std::string all;
      for (;;) {
        std::string buf(7, '\0');
        auto r = co_await saturn::read(rfd, bytes(buf));
        if (!r || *r == 0)
          break;  // EOF
        all.append(buf.data(), *r);
      }
      co_return all;
    }(pp->r));
    for (int i = 0; i < 5; ++i) {
      (void)co_await saturn::sleep_for(200us);  // the reader is suspended in the kernel
      std::string part = "part" + std::to_string(i) + ";";
      auto w = co_await saturn::write(pp->w, cbytes(part));
      EXPECT_TRUE(w.has_value());
    }
    pp->close_write();
    co_return co_await std::move(reader);
  }(&p));
  EXPECT_EQ(got, "part0;part1;part2;part3;part4;");
}

// Random writes and reads at random offsets of a file, checked against a std::string
// model of the file after every read (the oracle), and once more with pread at the end.
TEST(task_io, file_random_read_write_against_model) {
  saturn::runtime rt;
  temp_file f;
  std::string model;
  rt.block_on([](int fd, std::string* m) -> task<> {
    std::mt19937 rng(20240611);
    for (int step = 0; step < 400; ++step) {
      const std::size_t off = rng() % 6000;
      const std::size_t len = 1 + rng() % 700;
      if (rng() % 2 == 0) {
        std::string data(len, '\0');
        for (auto& c : data)
          c = static_cast<char>('a' + rng() % 26);
        auto w = co_await saturn::write(fd, cbytes(data), off);
        EXPECT_TRUE(w.has_value()) << w.err().message();
        if (!w)
          co_return;
        EXPECT_EQ(*w, len);
        if (m->size() < off + len)
          m->resize(off + len, '\0');  // a hole reads as zeros
        m->replace(off, len, data);
      } else {
        std::string buf(len, '#');
        auto r = co_await saturn::read(fd, bytes(buf), off);
        EXPECT_TRUE(r.has_value()) << r.err().message();
        if (!r)
          co_return;
        const std::size_t expect_n = off >= m->size() ? 0 : std::min(len, m->size() - off);
        EXPECT_EQ(*r, expect_n) << "step " << step;
        EXPECT_EQ(buf.substr(0, expect_n), m->substr(std::min(off, m->size()), expect_n)) << "step " << step;
      }
    }
  }(f.fd, &model));
  std::string disk(model.size() + 16, '\0');
  const ssize_t n = ::pread(f.fd, disk.data(), disk.size(), 0);
  ASSERT_EQ(n, static_cast<ssize_t>(model.size()));
  disk.resize(static_cast<std::size_t>(n));
  EXPECT_EQ(disk, model);
}

TEST(task_io, file_position_reads_and_writes_advance) {
  saturn::runtime rt;
  temp_file f;
  const std::string got = rt.block_on([](int fd) -> task<std::string> {
    for (const char* part : {"one,", "two,", "three"}) {
      std::string s = part;
      auto w = co_await saturn::write(fd, cbytes(s));  // offset -1: the file position
      EXPECT_TRUE(w.has_value());
    }
    EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 13);
    ::lseek(fd, 0, SEEK_SET);
    std::string a(4, '\0');
    std::string b(9, '\0');
    auto r1 = co_await saturn::read(fd, bytes(a));
    auto r2 = co_await saturn::read(fd, bytes(b));
    EXPECT_TRUE(r1 && r2);
    co_return a + b.substr(0, r2 ? *r2 : 0);
  }(f.fd));
  EXPECT_EQ(got, "one,two,three");
}

TEST(task_io, writev_and_readv_scatter_gather) {
  saturn::runtime rt;
  temp_file f;
  const std::string got = rt.block_on([](int fd) -> task<std::string> {
    std::string a = "alpha-";
    std::string b = "beta-";
    std::string c = "gamma";
    std::array<::iovec, 3> out{::iovec{a.data(), a.size()}, ::iovec{b.data(), b.size()},
                               ::iovec{c.data(), c.size()}};
    auto w = co_await saturn::writev(fd, out, 0);
    EXPECT_TRUE(w.has_value());
    EXPECT_EQ(w ? *w : 0, a.size() + b.size() + c.size());
    // read back into differently sized pieces
    std::string x(3, '\0');
    std::string y(10, '\0');
    std::string z(10, '\0');
    std::array<::iovec, 3> in{::iovec{x.data(), x.size()}, ::iovec{y.data(), y.size()},
                              ::iovec{z.data(), z.size()}};
    auto r = co_await saturn::readv(fd, in, 0);
    EXPECT_TRUE(r.has_value());
    const std::size_t n = r ? *r : 0;
    EXPECT_EQ(n, 16u);
    EXPECT_EQ(x, "alp");
    EXPECT_EQ(y, "ha-beta-ga");
    co_return x + y + z.substr(0, n - 13);
  }(f.fd));
  EXPECT_EQ(got, "alpha-beta-gamma");
}

TEST(task_io, writev_readv_on_a_pipe) {
  saturn::runtime rt;
  pipe_fds p;
  const std::string got = rt.block_on([](int rfd, int wfd) -> task<std::string> {
    std::string a = "left|";
    std::string b = "right";
    std::array<::iovec, 2> out{::iovec{a.data(), a.size()}, ::iovec{b.data(), b.size()}};
    auto w = co_await saturn::writev(wfd, out);
    EXPECT_TRUE(w.has_value());
    std::string x(5, '\0');
    std::string y(5, '\0');
    std::array<::iovec, 2> in{::iovec{x.data(), x.size()}, ::iovec{y.data(), y.size()}};
    auto r = co_await saturn::readv(rfd, in);
    EXPECT_TRUE(r.has_value());
    EXPECT_EQ(r ? *r : 0, 10u);
    co_return x + y;
  }(p.r, p.w));
  EXPECT_EQ(got, "left|right");
}

// Fixed buffers registered from inside the task (the loop of the thread the task runs on).
TEST(task_io, read_fixed_and_write_fixed) {
  saturn::runtime rt;
  temp_file f;
  std::vector<std::byte> buf_out(8192);
  std::vector<std::byte> buf_in(8192);
  std::string skip_reason;
  rt.block_on([](int fd, std::vector<std::byte>* out, std::vector<std::byte>* in, std::string* skip) -> task<> {
    saturn::task_context& ctx = co_await saturn::this_task::context();
    EXPECT_NE(ctx.sched, nullptr);
    saturn::event_loop* loop = saturn::event_loop::current();
    std::array<::iovec, 2> iov{::iovec{out->data(), out->size()}, ::iovec{in->data(), in->size()}};
    if (std::error_code ec = saturn::ext::register_buffers(*loop, iov)) {
      *skip = "register_buffers failed (" + ec.message() + "; RLIMIT_MEMLOCK too low?)";
      co_return;
    }
    for (std::size_t i = 0; i < out->size(); ++i)
      (*out)[i] = static_cast<std::byte>((i * 131 + 7) & 0xff);
    // write the middle 5000 bytes of buffer 0 at offset 100
    auto w = co_await saturn::write_fixed(fd, std::span<const std::byte>(*out).subspan(1000, 5000), 100, 0);
    EXPECT_TRUE(w.has_value()) << w.err().message();
    EXPECT_EQ(w ? *w : 0, 5000u);
    // read them back into the start of buffer 1
    auto r = co_await saturn::read_fixed(fd, std::span<std::byte>(*in).first(6000), 100, 1);
    EXPECT_TRUE(r.has_value()) << r.err().message();
    EXPECT_EQ(r ? *r : 0, 5000u);
    EXPECT_TRUE(std::equal(in->begin(), in->begin() + 5000, out->begin() + 1000));
    // a buffer index that was never registered is an error value naming the operation
    auto bad = co_await saturn::write_fixed(fd, std::span<const std::byte>(*out).first(16), 0, 7);
    EXPECT_FALSE(bad.has_value());
    if (!bad) {
      EXPECT_TRUE(starts_with(bad.err().message(), "write_fixed: ")) << bad.err().message();
    }
    saturn::ext::unregister_buffers(*loop);
  }(f.fd, &buf_out, &buf_in, &skip_reason));
  if (!skip_reason.empty()) {
    GTEST_SKIP() << skip_reason;
  }
}

TEST(task_io, errors_are_values_naming_the_operation) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    std::string buf(8, '\0');
    const int bad_fd = 1'000'000;  // far above any open descriptor
    auto r = co_await saturn::read(bad_fd, bytes(buf));
    EXPECT_FALSE(r.has_value());
    if (!r) {
      EXPECT_TRUE(r.err() == std::errc::bad_file_descriptor) << r.err().message();
      EXPECT_TRUE(r.code() == std::errc::bad_file_descriptor);
      EXPECT_TRUE(starts_with(r.err().message(), "read: ")) << r.err().message();
      EXPECT_STREQ(r.err().operation, "read");
    }
    auto w = co_await saturn::write(bad_fd, cbytes(buf));
    EXPECT_FALSE(w.has_value());
    if (!w) {
      EXPECT_TRUE(w.err() == std::errc::bad_file_descriptor);
      EXPECT_TRUE(starts_with(w.err().message(), "write: ")) << w.err().message();
    }
    std::array<::iovec, 1> iov{::iovec{buf.data(), buf.size()}};
    auto rv = co_await saturn::readv(bad_fd, iov);
    EXPECT_FALSE(rv.has_value());
    if (!rv) {
      EXPECT_TRUE(starts_with(rv.err().message(), "readv: ")) << rv.err().message();
    }
    auto wv = co_await saturn::writev(bad_fd, iov);
    EXPECT_FALSE(wv.has_value());
    if (!wv) {
      EXPECT_TRUE(starts_with(wv.err().message(), "writev: ")) << wv.err().message();
    }
    // value() turns the error into an exception that still names the operation
    try {
      (void)r.value();
      ADD_FAILURE() << "value() of an error did not throw";
    } catch (const std::system_error& e) {
      EXPECT_TRUE(e.code() == std::errc::bad_file_descriptor);
      EXPECT_TRUE(starts_with(e.what(), "read")) << e.what();
    }
  }());
}

TEST(task_io, write_to_a_read_only_fd_is_ebadf) {
  saturn::runtime rt;
  pipe_fds p;
  rt.block_on([](int rfd) -> task<> {
    std::string s = "x";
    auto w = co_await saturn::write(rfd, cbytes(s));  // the read end of a pipe
    EXPECT_FALSE(w.has_value());
    if (!w) {
      EXPECT_TRUE(w.err() == std::errc::bad_file_descriptor) << w.err().message();
    }
  }(p.r));
}

TEST(task_io, kernel_timeout_expiry_is_success) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    const auto t0 = saturn::clock::now();
    auto r = co_await saturn::kernel_timeout(2ms);
    EXPECT_TRUE(r.has_value()) << r.err().message();
    EXPECT_GE(saturn::clock::now() - t0, 2ms);
    auto zero = co_await saturn::kernel_timeout(0ns);
    EXPECT_TRUE(zero.has_value());
  }());
}

// cancel(&awaiter) from another task: the target read ends with operation_canceled and the
// cancel itself reports 0; cancelling it again after completion reports ENOENT.
TEST(task_io, cancel_an_in_flight_read_from_another_task) {
  saturn::runtime rt;
  pipe_fds p;
  rt.block_on([](int rfd) -> task<> {
    auto* root = co_await root_ctx();
    const saturn::operation* target = nullptr;
    auto reader = saturn::spawn_in(*root, [](int fd, const saturn::operation** tgt) -> task<saturn::result<std::size_t>> {
      std::string buf(4, '\0');
      auto aw = saturn::read(fd, bytes(buf));
      *tgt = &aw;
      auto r = co_await aw;
      *tgt = nullptr;
      co_return r;
    }(rfd, &target));
    co_await saturn::yield();
    EXPECT_NE(target, nullptr);
    const saturn::operation* op = target;
    auto c = co_await saturn::cancel(op);
    EXPECT_TRUE(c.has_value()) << c.err().message();
    EXPECT_EQ(c ? *c : -1, 0);
    auto r = co_await std::move(reader);
    EXPECT_FALSE(r.has_value());
    if (!r) {
      EXPECT_TRUE(r.err() == std::errc::operation_canceled) << r.err().message();
      EXPECT_TRUE(starts_with(r.err().message(), "read: "));
    }
  }(p.r));
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

TEST(task_io, cancel_of_an_unknown_operation_is_enoent) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    saturn::operation never_submitted;
    auto c = co_await saturn::cancel(&never_submitted);
    EXPECT_FALSE(c.has_value());
    if (!c) {
      EXPECT_TRUE(c.err() == std::errc::no_such_file_or_directory) << c.err().message();
      EXPECT_TRUE(starts_with(c.err().message(), "cancel: "));
    }
  }());
}

// 64 readers suspended on 64 pipes; a writer feeds them in a shuffled order with distinct
// payloads. Every reader gets exactly its own payload.
TEST(task_io, many_concurrent_reads_on_many_pipes) {
  saturn_test::watchdog dog(20s, "many concurrent reads");
  saturn::runtime rt;
  constexpr int n = 64;
  std::vector<std::unique_ptr<pipe_fds>> pipes;
  for (int i = 0; i < n; ++i)
    pipes.push_back(std::make_unique<pipe_fds>());
  const int good = rt.block_on([](std::vector<std::unique_ptr<pipe_fds>>* ps) -> task<int> {
    auto* root = co_await root_ctx();
    std::vector<saturn::join_handle<std::string>> readers;
    for (int i = 0; i < n; ++i) {
      readers.push_back(saturn::spawn_in(*root, [](int fd) -> task<std::string> {
        std::string buf(32, '\0');
        auto r = co_await saturn::read(fd, bytes(buf));
        buf.resize(r ? *r : 0);
        co_return buf;
      }((*ps)[static_cast<std::size_t>(i)]->r)));
    }
    co_await saturn::yield();
    EXPECT_EQ(saturn::event_loop::current()->in_flight(), static_cast<std::size_t>(n));
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i)
      order[static_cast<std::size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(99));
    for (int i : order) {
      std::string msg = "payload-" + std::to_string(i);
      auto w = co_await saturn::write((*ps)[static_cast<std::size_t>(i)]->w, cbytes(msg));
      EXPECT_TRUE(w.has_value());
    }
    int ok = 0;
    for (int i = 0; i < n; ++i)
      ok += (co_await std::move(readers[static_cast<std::size_t>(i)]) == "payload-" + std::to_string(i)) ? 1 : 0;
    co_return ok;
  }(&pipes));
  EXPECT_EQ(good, n);
}

TEST(task_io, close_through_the_ring) {
  saturn::runtime rt;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const bool ok = rt.block_on([](int a, int b) -> task<bool> {
    auto r1 = co_await saturn::close(a);
    auto r2 = co_await saturn::close(b);
    auto again = co_await saturn::close(a);  // already closed: EBADF, named "close"
    co_return r1.has_value() && r2.has_value() && !again.has_value() &&
        again.err() == std::errc::bad_file_descriptor && std::string(again.err().operation) == "close";
  }(fds[0], fds[1]));
  EXPECT_TRUE(ok);
  EXPECT_EQ(::fcntl(fds[0], F_GETFD), -1);
}

namespace {
task<std::pair<unsigned, bool>> poll_then_write(int rfd, int wfd) {
  // The read end is not ready until a writer writes; poll reports POLLIN without reading.
  auto* root = co_await root_ctx();
  auto waiter = saturn::spawn_in(*root, [](int fd) -> task<unsigned> {
    auto p = saturn::poll(fd, POLLIN);
    auto r = co_await p;
    co_return r.has_value() ? *r : 0u;
  }(rfd));
  (void)co_await saturn::sleep_for(5ms);
  const bool early = waiter.is_finished();
  std::string msg = "x";
  (void)co_await saturn::write(wfd, cbytes(msg));
  const unsigned mask = co_await waiter;
  co_return std::pair{mask, early};
}
}  // namespace

TEST(task_io, poll_reports_readiness_without_reading) {
  saturn::runtime rt;
  pipe_fds p;
  auto [mask, early] = rt.block_on(poll_then_write(p.r, p.w));
  EXPECT_FALSE(early) << "poll completed before the pipe had data";
  EXPECT_TRUE(mask & POLLIN);
  char c = 0;
  EXPECT_EQ(::read(p.r, &c, 1), 1) << "poll must leave the byte in the pipe";
  EXPECT_EQ(c, 'x');
}

TEST(task_io, poll_on_a_closed_peer_reports_hangup_and_cancel_ends_it) {
  saturn::runtime rt;
  pipe_fds p;
  ::close(p.w);
  p.w = -1;
  const unsigned mask = rt.block_on([](int fd) -> task<unsigned> {
    auto r = co_await saturn::poll(fd, POLLIN);
    co_return r.has_value() ? *r : 0u;
  }(p.r));
  EXPECT_TRUE(mask & POLLHUP);
  pipe_fds q;
  const bool cancelled = rt.block_on([](int fd) -> task<bool> {
    auto r = co_await saturn::when_any(
        [](int f) -> task<saturn::result<unsigned>> { co_return co_await saturn::poll(f, POLLIN); }(fd),
        [](std::chrono::milliseconds d) -> task<saturn::result<void>> { co_return co_await saturn::sleep_for(d); }(10ms));
    co_return r.index() == 1;
  }(q.r));
  EXPECT_TRUE(cancelled);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}
