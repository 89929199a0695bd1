// read/write/readv/writev through the callback and raw tiers: pipes, files at explicit
// offsets and at the file position (-1), short reads, EOF, and bad descriptors.
#include <saturn/ext/submit.hpp>
#include <sys/uio.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::loop_options;

class rw : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts() const { return loop_options{.defer_taskrun = GetParam()}; }
};

TEST_P(rw, pipe_write_then_read) {
  event_loop loop(opts());
  pipe_fds p;
  const char msg[] = "hello saturn";
  char buf[64] = {};
  int wres = 0;
  int rres = 0;
  loop.write(p.w, msg, sizeof msg, 0, [&](int res) { wres = res; });
  loop.read(p.r, buf, sizeof buf, 0, [&](int res) { rres = res; });
  loop.run();
  EXPECT_EQ(wres, static_cast<int>(sizeof msg));
  EXPECT_EQ(rres, static_cast<int>(sizeof msg));
  EXPECT_STREQ(buf, msg);
}

TEST_P(rw, pipe_read_waits_for_data) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[16] = {};
  int rres = 0;
  int calls = 0;
  loop.read(p.r, buf, sizeof buf, 0, [&](int res) {
    rres = res;
    ++calls;
  });
  for (int i = 0; i < 3; ++i)
    loop.run_once(false);
  EXPECT_EQ(calls, 0);
  // The data arrives from the loop itself, a few iterations later.
  loop.after(5ms, [&] { ASSERT_EQ(::write(p.w, "abc", 3), 3); });
  loop.run();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(rres, 3);  // a short read: the pipe held 3 of 16 bytes
  EXPECT_EQ(std::string(buf, 3), "abc");
}

TEST_P(rw, pipe_read_at_eof_is_zero) {
  event_loop loop(opts());
  pipe_fds p;
  p.close_write();
  char buf[8];
  int rres = -1;
  loop.read(p.r, buf, sizeof buf, 0, [&](int res) { rres = res; });
  loop.run();
  EXPECT_EQ(rres, 0);
}

TEST_P(rw, pipe_write_without_reader_is_epipe) {
  event_loop loop(opts());
  pipe_fds p;
  ::close(p.r);
  p.r = -1;
  // SIGPIPE would kill the test: the kernel sends it on a write to a pipe with no reader.
  struct sigaction ign {};
  struct sigaction old {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  int wres = 0;
  loop.write(p.w, "x", 1, 0, [&](int res) { wres = res; });
  loop.run();
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_EQ(wres, -EPIPE);
}

TEST_P(rw, file_at_explicit_offsets) {
  event_loop loop(opts());
  temp_file f;
  int w1 = 0;
  int w2 = 0;
  loop.write(f.fd, "world", 5, 6, [&](int res) { w1 = res; });
  loop.write(f.fd, "hello ", 6, 0, [&](int res) { w2 = res; });
  loop.run();
  EXPECT_EQ(w1, 5);
  EXPECT_EQ(w2, 6);
  EXPECT_EQ(f.contents(), "hello world");
  EXPECT_EQ(::lseek(f.fd, 0, SEEK_CUR), 0) << "positioned I/O must not move the file position";

  char buf[16] = {};
  int r = 0;
  loop.read(f.fd, buf, 5, 6, [&](int res) { r = res; });
  loop.run();
  EXPECT_EQ(r, 5);
  EXPECT_EQ(std::string(buf, 5), "world");

  // Reading past the end is EOF, not an error.
  int past = -1;
  loop.read(f.fd, buf, sizeof buf, 1000, [&](int res) { past = res; });
  loop.run();
  EXPECT_EQ(past, 0);
}

TEST_P(rw, file_at_file_position) {
  event_loop loop(opts());
  temp_file f;
  // One after the other (each completes before the next is submitted): the file position
  // advances like write(2).
  int w = 0;
  loop.write(f.fd, "abc", 3, -1, [&](int res) { w += res; });
  loop.run();
  loop.write(f.fd, "def", 3, file_pos, [&](int res) { w += res; });
  loop.run();
  EXPECT_EQ(w, 6);
  EXPECT_EQ(f.contents(), "abcdef");
  EXPECT_EQ(::lseek(f.fd, 0, SEEK_CUR), 6);

  ASSERT_EQ(::lseek(f.fd, 2, SEEK_SET), 2);
  char buf[8] = {};
  int r = 0;
  loop.read(f.fd, buf, 3, file_pos, [&](int res) { r = res; });
  loop.run();
  EXPECT_EQ(r, 3);
  EXPECT_EQ(std::string(buf, 3), "cde");
  EXPECT_EQ(::lseek(f.fd, 0, SEEK_CUR), 5);
}

TEST_P(rw, readv_writev_on_file) {
  event_loop loop(opts());
  temp_file f;
  char a[] = "one-";
  char b[] = "two-";
  char c[] = "three";
  const ::iovec out[] = {{a, 4}, {b, 4}, {c, 5}};
  raw_op wop;
  saturn::ext::submit_writev(loop, &wop, f.fd, out, 3, 0);
  loop.run();
  EXPECT_EQ(wop.calls, 1);
  EXPECT_EQ(wop.res, 13);
  EXPECT_EQ(f.contents(), "one-two-three");

  char x[3] = {};
  char y[6] = {};
  const ::iovec in[] = {{x, sizeof x}, {y, sizeof y}};
  raw_op rop;
  saturn::ext::submit_readv(loop, &rop, f.fd, in, 2, 4);  // from "two-three"
  loop.run();
  EXPECT_EQ(rop.calls, 1);
  EXPECT_EQ(rop.res, 9);
  EXPECT_EQ(std::string(x, 3), "two");
  EXPECT_EQ(std::string(y, 6), "-three");
}

TEST_P(rw, readv_writev_on_pipe_at_file_position) {
  event_loop loop(opts());
  pipe_fds p;
  char a[] = "ab";
  char b[] = "cde";
  const ::iovec out[] = {{a, 2}, {b, 3}};
  char r1[1] = {};
  char r2[8] = {};
  const ::iovec in[] = {{r1, 1}, {r2, 8}};
  raw_op wop;
  raw_op rop;
  saturn::ext::submit_writev(loop, &wop, p.w, out, 2, file_pos);
  saturn::ext::submit_readv(loop, &rop, p.r, in, 2, file_pos);
  loop.run();
  EXPECT_EQ(wop.res, 5);
  EXPECT_EQ(rop.res, 5);
  EXPECT_EQ(r1[0], 'a');
  EXPECT_EQ(std::string(r2, 4), "bcde");
}

TEST_P(rw, bad_fd_is_ebadf) {
  event_loop loop(opts());
  const int bad = 1'000'000;  // above any RLIMIT_NOFILE in use: never open
  char buf[8] = {};
  int r = 0;
  int w = 0;
  loop.read(bad, buf, sizeof buf, 0, [&](int res) { r = res; });
  loop.write(bad, buf, sizeof buf, 0, [&](int res) { w = res; });
  ::iovec iov{buf, sizeof buf};
  raw_op rv;
  raw_op wv;
  saturn::ext::submit_readv(loop, &rv, bad, &iov, 1, 0);
  saturn::ext::submit_writev(loop, &wv, bad, &iov, 1, 0);
  loop.run();
  EXPECT_EQ(r, -EBADF);
  EXPECT_EQ(w, -EBADF);
  EXPECT_EQ(rv.res, -EBADF);
  EXPECT_EQ(wv.res, -EBADF);
  EXPECT_EQ(loop.in_flight(), 0u);
}

TEST_P(rw, write_to_read_only_fd_is_ebadf) {
  event_loop loop(opts());
  pipe_fds p;
  int w = 0;
  loop.write(p.r, "x", 1, 0, [&](int res) { w = res; });
  loop.run();
  EXPECT_EQ(w, -EBADF);
}

TEST_P(rw, bad_buffer_is_efault) {
  event_loop loop(opts());
  temp_file f;
  ASSERT_EQ(::pwrite(f.fd, "data", 4, 0), 4);
  int r = 0;
  loop.read(f.fd, reinterpret_cast<void*>(std::uintptr_t{8}), 4, 0, [&](int res) { r = res; });
  loop.run();
  EXPECT_EQ(r, -EFAULT);
}

// A loop that never sleeps (ready work every iteration) still collects a completion the
// kernel finishes asynchronously: with DEFER_TASKRUN it waits as task work until an
// enter asks for it, and the loop asks (GETEVENTS) only when the kernel flags it pending.
TEST_P(rw, busy_loop_collects_an_async_completion_without_sleeping) {
  event_loop loop(opts());
  pipe_fds p;
  char buf[8] = {};
  int rres = -1;
  bool done = false;
  loop.read(p.r, buf, sizeof buf, 0, [&](int res) {
    rres = res;
    done = true;
  });
  for (int i = 0; i < 10; ++i)
    loop.run_once(false);  // the read is in the kernel, parked on the empty pipe
  std::thread writer([&] {
    std::this_thread::sleep_for(2ms);
    ASSERT_EQ(::write(p.w, "xyz", 3), 3);
  });
  struct repost : saturn::runnable {
    event_loop* loop = nullptr;
  } tick;
  tick.loop = &loop;
  tick.m_fn = [](saturn::runnable* self, saturn::run_mode mode) noexcept {
    if (mode == saturn::run_mode::run)
      static_cast<repost*>(self)->loop->post(self);  // ready again: the loop never blocks
  };
  loop.post(&tick);
  long iterations = 0;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!done && std::chrono::steady_clock::now() < until) {
    loop.run_once(true);
    ++iterations;
  }
  writer.join();
  EXPECT_TRUE(done) << "the read's completion never came in " << iterations << " busy iterations";
  tick.m_fn = [](saturn::runnable*, saturn::run_mode) noexcept {};
  loop.run_once(false);  // the last repost runs and stops
  EXPECT_EQ(rres, 3);
  EXPECT_EQ(std::string(buf, 3), "xyz");
}

INSTANTIATE_TEST_SUITE_P(modes, rw, ::testing::Bool(), mode_name);

}  // namespace
