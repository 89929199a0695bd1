// read_file / write_file round trips (empty, small, large, unknown-size procfs files) and
// their errors.
#include <gtest/gtest.h>
#include <saturn/fs/whole_file.hpp>
#include <saturn/task/runtime.hpp>

#include "fs/fs_test_support.hpp"

#include <random>

using namespace saturn;
using fs_test::scratch_dir;

namespace {

task<fs::fs_result<std::vector<std::byte>>> roundtrip(std::string path, std::vector<std::byte>* data, bool sync) {
  auto w = co_await fs::write_file(path, *data, 0600, sync);
  if (!w)
    co_return w.err();
  co_return co_await fs::read_file(path);
}

using fs_test::random_bytes;

}  // namespace

TEST(fs_whole_file, roundtrips_of_many_sizes) {
  scratch_dir d;
  runtime rt;
  std::mt19937 rng(42);
  std::vector<std::size_t> sizes = {0, 1, 4095, 4096, 4097, 16 * 1024, 16 * 1024 + 1, 100'000};
  for (int i = 0; i < 8; ++i)
    sizes.push_back(rng() % 300'000);
  for (std::size_t n : sizes) {
    auto data = random_bytes(n, static_cast<unsigned>(n));
    std::string name = "f";
    name += std::to_string(n);
    auto back = rt.block_on(roundtrip(d / name, &data, n % 2 == 0));
    ASSERT_TRUE(back) << back.err().message();
    EXPECT_EQ(*back, data) << "size " << n;
    EXPECT_EQ(fs_test::slurp(d / name).size(), n);  // oracle: plain read
  }
}

TEST(fs_whole_file, large_file) {
  scratch_dir d;
  runtime rt;
  auto data = random_bytes(std::size_t{48} << 20, 3);  // several read/write chunks' worth
  auto back = rt.block_on(roundtrip(d / "large", &data, false));
  ASSERT_TRUE(back) << back.err().message();
  EXPECT_TRUE(*back == data);
}

TEST(fs_whole_file, rewrite_truncates) {
  scratch_dir d;
  runtime rt;
  auto big = random_bytes(10'000, 1), small = random_bytes(10, 2);
  ASSERT_TRUE(rt.block_on(roundtrip(d / "t", &big, false)));
  auto back = rt.block_on(roundtrip(d / "t", &small, false));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, small);
}

namespace {
task<fs::fs_result<std::vector<std::byte>>> read_task(std::string p) { co_return co_await fs::read_file(p); }
task<fs::fs_result<void>> write_task(std::string p) {
  const char x[] = "data";
  co_return co_await fs::write_file(p, std::as_bytes(std::span(x, 4)));
}
}  // namespace

TEST(fs_whole_file, reads_files_whose_size_is_unknown) {
  runtime rt;
  // procfs reports size 0; the content is longer than the first read buffer.
  auto r = rt.block_on(read_task("/proc/self/maps"));
  ASSERT_TRUE(r) << r.err().message();
  EXPECT_GT(r->size(), 0u);
}

TEST(fs_whole_file, errors_name_step_and_path) {
  scratch_dir d;
  runtime rt;
  auto r = rt.block_on(read_task(d / "nope"));
  ASSERT_FALSE(r);
  EXPECT_STREQ(r.err().operation, "open");
  EXPECT_EQ(r.err().path, d / "nope");
  EXPECT_TRUE(r.err() == std::errc::no_such_file_or_directory);

  auto rd = rt.block_on(read_task(d.path()));  // a directory: open works, read fails
  ASSERT_FALSE(rd);
  EXPECT_TRUE(rd.err() == std::errc::is_a_directory);
  EXPECT_EQ(rd.err().path, d.path());

  auto w = rt.block_on(write_task(d / "no/such/dir/file"));
  ASSERT_FALSE(w);
  EXPECT_STREQ(w.err().operation, "open");
  EXPECT_EQ(w.err().path, d / "no/such/dir/file");
  EXPECT_NE(w.err().message().find("no/such/dir/file"), std::string::npos);
  EXPECT_THROW(w.value(), std::system_error);
}
