// Registered buffers: read_fixed/write_fixed on files and pipes, and their error paths
// (no buffers registered, an index out of range, a buffer outside the registered range,
// a bad descriptor).
#include <saturn/ext/submit.hpp>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::loop_options;

class fixed : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts() const { return loop_options{.defer_taskrun = GetParam()}; }
};

struct two_buffers {
  std::unique_ptr<char[]> a{new char[4096]()};
  std::unique_ptr<char[]> b{new char[4096]()};
  ::iovec iov[2] = {{a.get(), 4096}, {b.get(), 4096}};
};

TEST_P(fixed, write_fixed_then_read_fixed_on_file) {
  event_loop loop(opts());
  two_buffers bufs;
  ASSERT_FALSE(saturn::ext::register_buffers(loop, bufs.iov));
  temp_file f;
  std::memcpy(bufs.a.get(), "registered!", 11);
  int w = 0;
  loop.write_fixed(f.fd, bufs.a.get(), 11, 0, 0, [&](int res) { w = res; });
  loop.run();
  EXPECT_EQ(w, 11);
  EXPECT_EQ(f.contents(), "registered!");

  // Read into the middle of the second buffer, at an offset.
  int r = 0;
  char* dst = bufs.b.get() + 100;
  loop.read_fixed(f.fd, dst, 6, 5, 1, [&](int res) { r = res; });
  loop.run();
  EXPECT_EQ(r, 6);
  EXPECT_EQ(std::string(dst, 6), "tered!");
}

TEST_P(fixed, fixed_ops_on_pipe_at_file_position) {
  event_loop loop(opts());
  two_buffers bufs;
  ASSERT_FALSE(saturn::ext::register_buffers(loop, bufs.iov));
  pipe_fds p;
  std::memcpy(bufs.a.get(), "pipe", 4);
  int w = 0;
  int r = 0;
  loop.read_fixed(p.r, bufs.b.get(), 4096, file_pos, 1, [&](int res) { r = res; });
  loop.write_fixed(p.w, bufs.a.get(), 4, file_pos, 0, [&](int res) { w = res; });
  loop.run();
  EXPECT_EQ(w, 4);
  EXPECT_EQ(r, 4);
  EXPECT_EQ(std::string(bufs.b.get(), 4), "pipe");
}

TEST_P(fixed, nothing_registered_is_an_error) {
  event_loop loop(opts());
  temp_file f;
  char buf[16];
  int r = 0;
  int w = 0;
  loop.read_fixed(f.fd, buf, sizeof buf, 0, 0, [&](int res) { r = res; });
  loop.write_fixed(f.fd, buf, sizeof buf, 0, 0, [&](int res) { w = res; });
  loop.run();
  EXPECT_EQ(r, -EFAULT);
  EXPECT_EQ(w, -EFAULT);
  EXPECT_EQ(f.contents(), "");
}

TEST_P(fixed, unregistered_index_is_an_error) {
  event_loop loop(opts());
  two_buffers bufs;
  ASSERT_FALSE(saturn::ext::register_buffers(loop, bufs.iov));
  temp_file f;
  int r = 0;
  loop.read_fixed(f.fd, bufs.a.get(), 16, 0, 2, [&](int res) { r = res; });  // only 0 and 1 exist
  loop.run();
  EXPECT_EQ(r, -EFAULT);
}

TEST_P(fixed, buffer_outside_its_registration_is_an_error) {
  event_loop loop(opts());
  two_buffers bufs;
  ASSERT_FALSE(saturn::ext::register_buffers(loop, bufs.iov));
  temp_file f;
  ASSERT_EQ(::pwrite(f.fd, "0123456789", 10, 0), 10);
  int r = 0;
  // Buffer b under index 0, whose registration covers a only.
  loop.read_fixed(f.fd, bufs.b.get(), 10, 0, 0, [&](int res) { r = res; });
  loop.run();
  EXPECT_EQ(r, -EFAULT);
  // Runs past the end of the registration.
  int r2 = 0;
  loop.read_fixed(f.fd, bufs.a.get() + 4090, 10, 0, 0, [&](int res) { r2 = res; });
  loop.run();
  EXPECT_EQ(r2, -EFAULT);
}

TEST_P(fixed, unregister_then_use_is_an_error) {
  event_loop loop(opts());
  two_buffers bufs;
  ASSERT_FALSE(saturn::ext::register_buffers(loop, bufs.iov));
  saturn::ext::unregister_buffers(loop);
  temp_file f;
  int r = 0;
  loop.read_fixed(f.fd, bufs.a.get(), 16, 0, 0, [&](int res) { r = res; });
  loop.run();
  EXPECT_EQ(r, -EFAULT);
}

TEST_P(fixed, register_replaces_previous_set) {
  event_loop loop(opts());
  two_buffers first;
  two_buffers second;
  ASSERT_FALSE(saturn::ext::register_buffers(loop, first.iov));
  ASSERT_FALSE(saturn::ext::register_buffers(loop, std::span<const ::iovec>(second.iov, 1)));
  temp_file f;
  ASSERT_EQ(::pwrite(f.fd, "abcd", 4, 0), 4);
  int old_index1 = 0;
  int new_index0 = 0;
  loop.read_fixed(f.fd, second.b.get(), 4, 0, 1, [&](int res) { old_index1 = res; });
  loop.read_fixed(f.fd, second.a.get(), 4, 0, 0, [&](int res) { new_index0 = res; });
  loop.run();
  EXPECT_EQ(old_index1, -EFAULT);
  EXPECT_EQ(new_index0, 4);
  EXPECT_EQ(std::string(second.a.get(), 4), "abcd");
}

TEST_P(fixed, register_rejects_a_bad_iovec) {
  event_loop loop(opts());
  const ::iovec bad[] = {{nullptr, 4096}};
  const std::error_code ec = saturn::ext::register_buffers(loop, bad);
  EXPECT_TRUE(static_cast<bool>(ec)) << "registering a null buffer of 4096 bytes must fail";
}

TEST_P(fixed, bad_fd_is_ebadf) {
  event_loop loop(opts());
  two_buffers bufs;
  ASSERT_FALSE(saturn::ext::register_buffers(loop, bufs.iov));
  const int bad = 1'000'000;
  int r = 0;
  int w = 0;
  loop.read_fixed(bad, bufs.a.get(), 16, 0, 0, [&](int res) { r = res; });
  loop.write_fixed(bad, bufs.b.get(), 16, 0, 1, [&](int res) { w = res; });
  loop.run();
  EXPECT_EQ(r, -EBADF);
  EXPECT_EQ(w, -EBADF);
}

INSTANTIATE_TEST_SUITE_P(modes, fixed, ::testing::Bool(), mode_name);

}  // namespace
