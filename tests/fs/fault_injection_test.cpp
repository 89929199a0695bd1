// Files under injected faults (saturn/testing/fault_injection.hpp), fixed seeds:
// read_file/write_file with reads and writes cut short must move every byte, and an
// injected failure must come back as an fs_error naming the step and the path.
#include <gtest/gtest.h>
#include <saturn/fs/whole_file.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/testing/fault_injection.hpp>

#include "fs/fs_test_support.hpp"

#include <cerrno>
#include <random>
#include <string>
#include <vector>

namespace {

using fs_test::scratch_dir;
using saturn::task;
using saturn::testing::fault_plan;
using saturn::testing::fault_scope;
using saturn::testing::op_kind;

using fs_test::random_bytes;

class fs_faults : public ::testing::TestWithParam<std::uint64_t> {};
INSTANTIATE_TEST_SUITE_P(seeds, fs_faults, ::testing::Values(5u, 23u, 777u));

TEST_P(fs_faults, whole_file_round_trip_survives_short_reads_and_writes) {
  scratch_dir dir;
  fault_plan plan{.seed = GetParam()};
  plan.rules = {{op_kind::write, 0, 0.9}, {op_kind::read, 0, 0.9}};  // one file: few operations, so high odds
  fault_scope scope(plan);
  saturn::runtime rt;
  const std::string path = dir.path() + "/data.bin";
  const std::vector<std::byte> data = random_bytes(3 * 1024 * 1024 + 17, GetParam());
  auto w = rt.block_on(saturn::fs::write_file(path, data));
  ASSERT_TRUE(w.has_value()) << w.err().message();
  auto r = rt.block_on(saturn::fs::read_file(path));
  ASSERT_TRUE(r.has_value()) << r.err().message();
  EXPECT_TRUE(*r == data) << "bytes lost, duplicated or reordered (" << r->size() << " of " << data.size() << ")";
  EXPECT_GT(scope.stats().shorts_of(op_kind::write), 0u);
  EXPECT_GT(scope.stats().shorts_of(op_kind::read), 0u);
}

TEST(fs_faults_errors, injected_failures_name_the_step_and_the_path) {
  scratch_dir dir;
  const std::string path = dir.path() + "/x.bin";
  const std::vector<std::byte> data = random_bytes(4096, 1);
  saturn::runtime rt;
  {
    fault_plan plan{.seed = 3};
    plan.rules = {{op_kind::write, EIO, 1.0}};
    fault_scope scope(plan);
    saturn::runtime faulty;  // its ring picks the plan up
    auto w = faulty.block_on(saturn::fs::write_file(path, data));
    ASSERT_FALSE(w.has_value());
    EXPECT_EQ(w.err().message(), "write " + path + ": " + std::make_error_code(std::errc::io_error).message());
  }
  ASSERT_TRUE(rt.block_on(saturn::fs::write_file(path, data)).has_value());
  {
    fault_plan plan{.seed = 3};
    plan.rules = {{op_kind::open, ENOMEM, 1.0}};
    fault_scope scope(plan);
    saturn::runtime faulty;
    auto r = faulty.block_on(saturn::fs::read_file(path));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.err().message(), "open " + path + ": " + std::make_error_code(std::errc::not_enough_memory).message());
    EXPECT_EQ(scope.stats().errors_of(op_kind::open), 1u);
  }
}

}  // namespace
