// fs::file: every operation through the ring, against plain syscalls as the oracle, and
// errors that name the operation and the path.
#include <gtest/gtest.h>
#include <saturn/ext/submit.hpp>
#include <saturn/fs/file.hpp>
#include <saturn/task/runtime.hpp>

#include "fs/fs_test_support.hpp"

#include <sys/uio.h>

#include <cstring>
#include <random>
#include <vector>

using namespace saturn;
using fs_test::scratch_dir;

namespace {

using fs_test::random_bytes;

task<fs::fs_result<fs::file>> open_task(std::string path, int flags) { co_return co_await fs::file::open(path, flags); }

fs::fs_result<fs::file> open_now(const std::string& path, int flags) {
  runtime rt;
  return rt.block_on(open_task(path, flags));
}

}  // namespace

TEST(fs_file, open_missing_names_operation_and_path) {
  scratch_dir d;
  auto f = open_now(d / "missing", O_RDONLY);
  ASSERT_FALSE(f);
  EXPECT_TRUE(f.err() == std::errc::no_such_file_or_directory);
  EXPECT_STREQ(f.err().operation, "open");
  EXPECT_EQ(f.err().path, d / "missing");
  EXPECT_NE(f.err().message().find("open " + (d / "missing") + ": "), std::string::npos) << f.err().message();
  // Still usable as a generic saturn::error.
  const error generic = f.err();
  EXPECT_STREQ(generic.operation, "open");
  EXPECT_TRUE(generic == std::errc::no_such_file_or_directory);
}

TEST(fs_file, open_directory_for_writing_is_eisdir) {
  scratch_dir d;
  auto f = open_now(d.path(), O_WRONLY);
  ASSERT_FALSE(f);
  EXPECT_TRUE(f.err() == std::errc::is_a_directory);
  EXPECT_EQ(f.err().path, d.path());
}

TEST(fs_file, open_without_permission_is_eacces) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "running as root: file permissions are not enforced (see walk_app_test for the uid drop)";
  scratch_dir d;
  fs_test::touch(d / "secret");
  ::chmod((d / "secret").c_str(), 0);
  auto f = open_now(d / "secret", O_RDONLY);
  ASSERT_FALSE(f);
  EXPECT_TRUE(f.err() == std::errc::permission_denied);
  EXPECT_EQ(f.err().path, d / "secret");
}

namespace {
task<void> write_read_roundtrip(std::string path, std::vector<std::byte>* data) {
  auto f = co_await fs::file::open(path, O_RDWR | O_CREAT | O_TRUNC);
  EXPECT_TRUE(f) << f.err().message();
  // Plain write/read at offsets, out of order.
  const std::size_t half = data->size() / 2;
  auto w2 = f->write_at(std::span<const std::byte>(*data).subspan(half), half);
  auto n2 = co_await w2;
  EXPECT_TRUE(n2 && *n2 == data->size() - half);
  auto w1 = f->write_at(std::span<const std::byte>(*data).first(half), 0);
  auto n1 = co_await w1;
  EXPECT_TRUE(n1 && *n1 == half);
  auto s = co_await f->datasync();
  EXPECT_TRUE(s) << s.err().message();
  auto s2 = co_await f->sync();
  EXPECT_TRUE(s2);
  auto st = co_await f->stat();
  EXPECT_TRUE(st);
  EXPECT_EQ(st->stx_size, data->size());
  EXPECT_TRUE(S_ISREG(st->stx_mode));
  std::vector<std::byte> back(data->size());
  auto r = f->read_at(back, 0);
  auto nr = co_await r;
  EXPECT_TRUE(nr && *nr == data->size());
  EXPECT_EQ(back, *data);
  // Reading at end of file gives 0.
  std::byte one[1];
  auto re = f->read_at(one, data->size());
  auto ne = co_await re;
  EXPECT_TRUE(ne && *ne == 0);
  auto c = co_await f->close();
  EXPECT_TRUE(c) << c.err().message();
  EXPECT_FALSE(f->is_open());
}
}  // namespace

TEST(fs_file, write_read_at_offsets_sync_stat_close) {
  scratch_dir d;
  auto data = random_bytes(100'003, 7);
  runtime rt;
  rt.block_on(write_read_roundtrip(d / "a", &data));
  // Oracle: the bytes on disk, read by a plain syscall.
  EXPECT_EQ(fs_test::slurp(d / "a"), std::string(reinterpret_cast<const char*>(data.data()), data.size()));
}

namespace {
task<void> vectored(std::string path) {
  auto f = co_await fs::file::open(path, O_RDWR | O_CREAT | O_TRUNC);
  EXPECT_TRUE(f);
  char a[] = "hello ", b[] = "vectored ", c[] = "world";
  ::iovec out[3] = {{a, 6}, {b, 9}, {c, 5}};
  auto w = f->writev_at(out, 0);
  auto nw = co_await w;
  EXPECT_TRUE(nw && *nw == 20);
  char x[8] = {}, y[12] = {};
  ::iovec in[2] = {{x, 8}, {y, 12}};
  auto r = f->readv_at(in, 0);
  auto nr = co_await r;
  EXPECT_TRUE(nr && *nr == 20);
  EXPECT_EQ(std::string(x, 8) + std::string(y, 12), "hello vectored world");
}

task<void> fixed(std::string path) {
  event_loop* loop = event_loop::current();
  std::vector<std::byte> reg(8192);
  ::iovec iov{reg.data(), reg.size()};
  EXPECT_FALSE(saturn::ext::register_buffers(*loop, std::span<const ::iovec>(&iov, 1)));
  auto f = co_await fs::file::open(path, O_RDWR | O_CREAT | O_TRUNC);
  EXPECT_TRUE(f);
  for (std::size_t i = 0; i < 4096; ++i)
    reg[i] = static_cast<std::byte>(i * 31);
  auto w = f->write_fixed_at(std::span<const std::byte>(reg).first(4096), 4096, 0);
  auto nw = co_await w;
  EXPECT_TRUE(nw && *nw == 4096);
  auto r = f->read_fixed_at(std::span<std::byte>(reg).subspan(4096, 4096), 4096, 0);
  auto nr = co_await r;
  EXPECT_TRUE(nr && *nr == 4096);
  EXPECT_EQ(std::memcmp(reg.data(), reg.data() + 4096, 4096), 0);
  auto st = co_await f->stat();
  EXPECT_TRUE(st && st->stx_size == 8192);  // written at offset 4096
  saturn::ext::unregister_buffers(*loop);
}
}  // namespace

TEST(fs_file, readv_writev) {
  scratch_dir d;
  runtime rt;
  rt.block_on(vectored(d / "v"));
}

TEST(fs_file, registered_buffer_read_write) {
  scratch_dir d;
  runtime rt;
  rt.block_on(fixed(d / "fixed"));
}

namespace {
task<void> errors_name_the_path(std::string path) {
  auto f = co_await fs::file::open(path, O_RDONLY | O_CREAT);
  EXPECT_TRUE(f);
  const char msg[] = "x";
  auto w = f->write_at(std::as_bytes(std::span(msg, 1)), 0);
  auto nw = co_await w;  // opened read-only: EBADF
  EXPECT_FALSE(nw);
  if (!nw) {
    EXPECT_TRUE(nw.err() == std::errc::bad_file_descriptor);
    EXPECT_STREQ(nw.err().operation, "write");
    EXPECT_EQ(nw.err().path, path);
  }
  auto c = co_await f->close();
  EXPECT_TRUE(c);
  auto c2 = co_await f->close();  // already closed
  EXPECT_FALSE(c2);
  if (!c2) {
    EXPECT_STREQ(c2.err().operation, "close");
    EXPECT_EQ(c2.err().path, path);
  }
}
}  // namespace

TEST(fs_file, operation_errors_name_the_path) {
  scratch_dir d;
  runtime rt;
  rt.block_on(errors_name_the_path(d / "ro"));
}

TEST(fs_file, destructor_closes_and_move_transfers) {
  scratch_dir d;
  int fd = -1;
  {
    auto f = open_now(d.path(), O_RDONLY | O_DIRECTORY);
    ASSERT_TRUE(f);
    fs::file moved = std::move(*f);
    EXPECT_FALSE(f->is_open());
    fd = moved.fd();
    EXPECT_GE(::fcntl(fd, F_GETFD), 0);
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC);
  }
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1);  // closed by the destructor
}
