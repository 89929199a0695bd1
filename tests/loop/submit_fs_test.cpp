// submit_openat / submit_statx / submit_fsync on the raw tier, with plain syscalls as the
// oracle: the descriptor, the stat fields, and -errno results.
#include <saturn/ext/submit_fs.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::loop_options;

class submit_fs : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts() const { return loop_options{.defer_taskrun = GetParam()}; }
};

using saturn_test::run_until_done;

TEST_P(submit_fs, openat_statx_fsync_roundtrip) {
  event_loop loop(opts());
  char dir_tmpl[] = "/tmp/saturn_submit_fs_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_tmpl), nullptr);
  const int dirfd = ::open(dir_tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dirfd, 0);

  raw_op open_op;
  saturn::ext::submit_openat(loop, &open_op, dirfd, "new", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  run_until_done(loop, open_op);
  ASSERT_GE(open_op.res, 0) << std::strerror(-open_op.res);
  const int fd = open_op.res;
  ASSERT_EQ(::write(fd, "12345", 5), 5);

  raw_op sync_op;
  saturn::ext::submit_fsync(loop, &sync_op, fd, false);
  run_until_done(loop, sync_op);
  EXPECT_EQ(sync_op.res, 0);
  raw_op dsync_op;
  saturn::ext::submit_fsync(loop, &dsync_op, fd, true);
  run_until_done(loop, dsync_op);
  EXPECT_EQ(dsync_op.res, 0);

  struct ::statx by_path {}, by_fd {};
  raw_op stat_op, fstat_op;
  saturn::ext::submit_statx(loop, &stat_op, dirfd, "new", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &by_path);
  saturn::ext::submit_statx(loop, &fstat_op, fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &by_fd);
  run_until_done(loop, stat_op);
  run_until_done(loop, fstat_op);
  EXPECT_EQ(stat_op.res, 0);
  EXPECT_EQ(fstat_op.res, 0);
  struct ::stat oracle;
  ASSERT_EQ(::fstat(fd, &oracle), 0);
  EXPECT_EQ(by_path.stx_size, 5u);
  EXPECT_EQ(by_path.stx_ino, oracle.st_ino);
  EXPECT_EQ(by_fd.stx_ino, oracle.st_ino);
  EXPECT_EQ(by_path.stx_mode & 07777, oracle.st_mode & 07777);
  EXPECT_TRUE(S_ISREG(by_path.stx_mode));

  raw_op again;  // O_EXCL on an existing file
  saturn::ext::submit_openat(loop, &again, dirfd, "new", O_RDWR | O_CREAT | O_EXCL, 0640);
  run_until_done(loop, again);
  EXPECT_EQ(again.res, -EEXIST);
  raw_op missing;
  saturn::ext::submit_statx(loop, &missing, dirfd, "missing", 0, STATX_BASIC_STATS, &by_path);
  run_until_done(loop, missing);
  EXPECT_EQ(missing.res, -ENOENT);
  raw_op bad_sync;
  saturn::ext::submit_fsync(loop, &bad_sync, -1, false);
  run_until_done(loop, bad_sync);
  EXPECT_EQ(bad_sync.res, -EBADF);

  ::close(fd);
  ::unlinkat(dirfd, "new", 0);
  ::close(dirfd);
  ::rmdir(dir_tmpl);
}

INSTANTIATE_TEST_SUITE_P(modes, submit_fs, ::testing::Bool(), mode_name);

}  // namespace
