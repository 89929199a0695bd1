// list_dir / dir_reader against readdir(3) as the oracle, with every entry type, odd
// names, and directories larger than one getdents64 batch.
#include <gtest/gtest.h>
#include <saturn/fs/dir_reader.hpp>

#include "fs/fs_test_support.hpp"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstring>
#include <map>

using namespace saturn;
using fs_test::scratch_dir;

namespace {

std::map<std::string, fs::entry_type> oracle(const std::string& path) {
  std::map<std::string, fs::entry_type> out;
  DIR* d = ::opendir(path.c_str());
  while (struct dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..")
      continue;
    struct stat sb;
    ::fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW);
    out[n] = fs::type_of_mode(sb.st_mode);
  }
  ::closedir(d);
  return out;
}

std::map<std::string, fs::entry_type> listed(const std::string& path) {
  auto r = fs::list_dir(path);
  EXPECT_TRUE(r) << r.err().message();
  std::map<std::string, fs::entry_type> out;
  if (r)
    for (auto& e : *r) {
      EXPECT_NE(e.type, fs::entry_type::unknown);
      EXPECT_TRUE(out.emplace(e.name, e.type).second) << "duplicate " << e.name;
    }
  return out;
}

}  // namespace

TEST(fs_dir_reader, every_entry_type) {
  scratch_dir d;
  fs_test::touch(d / "file");
  ::mkdir((d / "dir").c_str(), 0755);
  ::symlink("file", (d / "link").c_str());
  ::symlink("missing", (d / "dangling").c_str());
  ::mkfifo((d / "fifo").c_str(), 0644);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sp = d / "sock";
  std::strncpy(addr.sun_path, sp.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(s);
  auto got = listed(d.path());
  EXPECT_EQ(got, oracle(d.path()));
  EXPECT_EQ(got["link"], fs::entry_type::symlink);
  EXPECT_EQ(got["dir"], fs::entry_type::directory);
  EXPECT_EQ(got["sock"], fs::entry_type::socket);
  EXPECT_EQ(got.size(), 6u);
}

TEST(fs_dir_reader, empty_directory) {
  scratch_dir d;
  auto r = fs::list_dir(d.path());
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
}

TEST(fs_dir_reader, odd_names) {
  scratch_dir d;
  const std::vector<std::string> names = {"new\nline", "\xff\xfe not utf-8", " lead space", "-dash",
                                          std::string(255, 'x'), "tab\there", "..dots", ".hidden"};
  for (const auto& n : names)
    fs_test::touch(d / n);
  auto got = listed(d.path());
  EXPECT_EQ(got.size(), names.size());
  for (const auto& n : names)
    EXPECT_EQ(got.count(n), 1u) << n;
}

TEST(fs_dir_reader, many_entries_span_several_batches) {
  scratch_dir d;
  // ~3000 long names: far more than one 32 KiB getdents64 batch.
  for (int i = 0; i < 3000; ++i) {
    std::string n(40, 'n');
    n += std::to_string(i);
    fs_test::touch(d / n);
  }
  for (int i = 0; i < 50; ++i) {
    std::string n = "dir";
    n += std::to_string(i);
    ::mkdir((d / n).c_str(), 0755);
  }
  EXPECT_EQ(listed(d.path()), oracle(d.path()));
}

TEST(fs_dir_reader, raw_batches_with_a_small_buffer) {
  scratch_dir d;
  for (int i = 0; i < 200; ++i) {
    std::string n = "e";
    n += std::to_string(i);
    fs_test::touch(d / n);
  }
  const int fd = ::open(d.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  alignas(8) std::byte buf[fs::k_max_dirent_size];  // the smallest buffer that always works
  fs::dir_reader r(fd, buf);
  std::size_t n = 0, batches = 0;
  for (;;) {
    const long got = r.read_raw();
    ASSERT_GE(got, 0);
    if (got == 0)
      break;
    ++batches;
    for (fs::dir_entry e : r.batch(got)) {
      EXPECT_EQ(e.name[0], 'e');
      ++n;
    }
  }
  ::close(fd);
  EXPECT_EQ(n, 200u);
  EXPECT_GT(batches, 1u);
}

TEST(fs_dir_reader, errors_name_the_path) {
  scratch_dir d;
  fs_test::touch(d / "plain");
  auto r = fs::list_dir(d / "plain");
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.err() == std::errc::not_a_directory);
  EXPECT_EQ(r.err().path, d / "plain");
  auto m = fs::list_dir(d / "missing");
  ASSERT_FALSE(m);
  EXPECT_NE(m.err().message().find(d / "missing"), std::string::npos);
}

TEST(fs_dir_reader, resolve_type_does_not_follow_symlinks) {
  // The DT_UNKNOWN fallback (some file systems leave d_type empty).
  scratch_dir d;
  ::mkdir((d / "dir").c_str(), 0755);
  ::symlink("dir", (d / "link").c_str());
  const int fd = ::open(d.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  fs::entry_type t = fs::entry_type::unknown;
  EXPECT_EQ(fs::resolve_type(fd, "link", t), 0);
  EXPECT_EQ(t, fs::entry_type::symlink);
  EXPECT_EQ(fs::resolve_type(fd, "dir", t), 0);
  EXPECT_EQ(t, fs::entry_type::directory);
  EXPECT_EQ(fs::resolve_type(fd, "missing", t), -ENOENT);
  ::close(fd);
}
