// ring::uring setup: flag probing (DEFER_TASKRUN on this kernel, else skipped with the
// reason), tiny and odd entry counts, the CQ size, opcode probing, and setup errors whose
// messages name the cause and the fix.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include "ring/ring.hpp"

namespace {

using saturn::ring::describe_setup_error;
using saturn::ring::setup_options;
using saturn::ring::uring;

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

/// Submits one NOP with `ud` and waits for it.
void nop_round_trip(uring& r, std::uint64_t ud) {
  io_uring_sqe* sqe = r.get_sqe();
  ASSERT_NE(sqe, nullptr);
  io_uring_prep_nop(sqe);
  io_uring_sqe_set_data64(sqe, ud);
  ASSERT_GE(r.enter(1, -1), 0);
  int seen = 0;
  r.reap([&](std::uint64_t u, int res, unsigned) {
    EXPECT_EQ(u, ud);
    EXPECT_EQ(res, 0);
    ++seen;
  });
  EXPECT_EQ(seen, 1);
}

TEST(ring_setup_error, enosys_names_seccomp_and_the_kernel_option) {
  const std::string m = describe_setup_error(ENOSYS, 64);
  EXPECT_TRUE(contains(m, "io_uring_setup(64 entries) failed")) << m;
  EXPECT_TRUE(contains(m, std::strerror(ENOSYS))) << m;
  EXPECT_TRUE(contains(m, "CONFIG_IO_URING")) << m;  // cause
  EXPECT_TRUE(contains(m, "seccomp")) << m;          // cause and fix
  EXPECT_TRUE(contains(m, "io_uring_enter")) << m;   // what the profile must allow
}

TEST(ring_setup_error, eperm_names_the_sysctl_and_how_to_change_it) {
  for (int err : {EPERM, EACCES}) {
    const std::string m = describe_setup_error(err, 8);
    EXPECT_TRUE(contains(m, "not permitted")) << m;
    EXPECT_TRUE(contains(m, "io_uring_disabled")) << m;
    EXPECT_TRUE(contains(m, "sysctl -w kernel.io_uring_disabled=0")) << m;
    EXPECT_TRUE(contains(m, "io_uring_group")) << m;
  }
}

TEST(ring_setup_error, enomem_names_memlock_and_the_fix) {
  const std::string m = describe_setup_error(ENOMEM, 4096);
  EXPECT_TRUE(contains(m, "4096 entries")) << m;
  EXPECT_TRUE(contains(m, "RLIMIT_MEMLOCK")) << m;
  EXPECT_TRUE(contains(m, "ulimit -l")) << m;
  EXPECT_TRUE(contains(m, "fewer entries")) << m;
  // The current limit is reported (a number in KiB or "unlimited").
  EXPECT_TRUE(contains(m, "KiB") || contains(m, "unlimited")) << m;
}

TEST(ring_setup_error, einval_names_the_kernel_version_and_entries) {
  const std::string m = describe_setup_error(EINVAL, 100000);
  EXPECT_TRUE(contains(m, "100000 entries")) << m;
  EXPECT_TRUE(contains(m, "5.19")) << m;
  EXPECT_TRUE(contains(m, "entry count")) << m;
}

TEST(ring_setup_error, emfile_names_the_descriptor_limit) {
  for (int err : {EMFILE, ENFILE}) {
    const std::string m = describe_setup_error(err, 8);
    EXPECT_TRUE(contains(m, "RLIMIT_NOFILE")) << m;
    EXPECT_TRUE(contains(m, "ulimit -n")) << m;
  }
}

TEST(ring_setup_error, unknown_errors_still_say_what_failed) {
  const std::string m = describe_setup_error(EIO, 8);
  EXPECT_TRUE(contains(m, "io_uring_setup(8 entries) failed")) << m;
  EXPECT_TRUE(contains(m, std::strerror(EIO))) << m;
}

// A real setup failure: no descriptor can be allocated, so io_uring_setup fails with
// EMFILE and the constructor throws that code with the explanatory message.
TEST(ring_setup_error, a_real_failure_throws_the_described_error) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        rlimit saved{};
        ::getrlimit(RLIMIT_NOFILE, &saved);
        rlimit none = saved;
        none.rlim_cur = 0;
        if (::setrlimit(RLIMIT_NOFILE, &none) != 0)
          std::_Exit(3);
        try {
          uring r(setup_options{});
          std::_Exit(4);  // should not have succeeded
        } catch (const std::system_error& e) {
          ::setrlimit(RLIMIT_NOFILE, &saved);  // first: the sanitizers' runtime needs descriptors too
          const std::string what = e.what();
          std::fprintf(stderr, "%s\n", e.what());
          const bool ok = e.code().value() == EMFILE && contains(what, "RLIMIT_NOFILE");
          std::_Exit(ok ? 0 : 5);
        }
      },
      ::testing::ExitedWithCode(0), "RLIMIT_NOFILE");
}

TEST(ring_setup, defer_taskrun_on_this_kernel) {
  uring r(setup_options{});
  const auto& f = r.feature_set();
  if (!f.defer_taskrun)
    GTEST_SKIP() << "the kernel refused IORING_SETUP_DEFER_TASKRUN (needs Linux >= 6.1); the loop runs with "
                    "COOP_TASKRUN instead";
  EXPECT_TRUE(f.single_issuer);
  EXPECT_FALSE(f.coop_taskrun);
  EXPECT_TRUE(f.ext_arg);
  EXPECT_TRUE(f.nodrop);
  nop_round_trip(r, 77);
}

/// True when the running kernel is at least major.minor.
bool kernel_at_least(int major, int minor) {
  utsname u{};
  int ma = 0, mi = 0;
  if (uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &ma, &mi) != 2)
    return false;
  return ma > major || (ma == major && mi >= minor);
}

TEST(ring_setup, no_sqarray_where_the_kernel_has_it) {
  uring r(setup_options{.entries = 8});
  if (!kernel_at_least(6, 6)) {
    EXPECT_FALSE(r.feature_set().no_sqarray);
    GTEST_SKIP() << "IORING_SETUP_NO_SQARRAY needs Linux >= 6.6";
  }
  EXPECT_TRUE(r.feature_set().no_sqarray);
  // Without the index array the kernel takes SQEs in ring order: wrap the 8-entry SQ many
  // times with batches of every size and check each NOP comes back once, in order.
  std::uint64_t next = 1, expect = 1;
  for (unsigned batch = 1; batch <= 8; ++batch) {
    for (int round = 0; round < 5; ++round) {
      for (unsigned i = 0; i < batch; ++i) {
        io_uring_sqe* sqe = r.get_sqe();
        ASSERT_NE(sqe, nullptr);
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, next++);
      }
      ASSERT_GE(r.enter(batch, -1), 0);
      r.reap([&](std::uint64_t u, int res, unsigned) {
        EXPECT_EQ(u, expect++);
        EXPECT_EQ(res, 0);
      });
    }
  }
  EXPECT_EQ(expect, next);
}

TEST(ring_setup, optional_features_are_probed) {
  uring r(setup_options{});
  const auto& f = r.feature_set();
  if (!f.msg_ring)
    GTEST_SKIP() << "IORING_OP_MSG_RING is missing (Linux >= 5.18): loops wake each other through the eventfd";
  EXPECT_TRUE(r.supports(IORING_OP_MSG_RING));
  EXPECT_TRUE(r.supports(IORING_OP_NOP));
  EXPECT_TRUE(r.supports(IORING_OP_READ));
  EXPECT_TRUE(r.supports(IORING_OP_LINK_TIMEOUT));
  EXPECT_FALSE(r.supports(-1));
  // The probe reaches past liburing 2.3's enum: IORING_OP_WAITID (Linux 6.7) is seen
  // where the kernel has it; nothing beyond what was probed is claimed.
  EXPECT_FALSE(r.supports(saturn::ring::probed_opcodes));
  EXPECT_FALSE(r.supports(100000));
  struct utsname u{};
  ::uname(&u);
  int major = 0, minor = 0;
  std::sscanf(u.release, "%d.%d", &major, &minor);
  if (major > 6 || (major == 6 && minor >= 7)) {
    EXPECT_TRUE(r.supports(saturn::ring::op_waitid)) << "Linux " << u.release << " has IORING_OP_WAITID";
  }
  if (!f.cqe_skip)
    GTEST_SKIP() << "IOSQE_CQE_SKIP_SUCCESS is missing (Linux >= 5.17)";
  if (!f.registered_fd)
    GTEST_SKIP() << "io_uring_register_ring_fd failed (Linux >= 5.18)";
}

TEST(ring_setup, without_defer_taskrun_falls_back_to_coop_taskrun) {
  uring r(setup_options{.defer_taskrun = false});
  const auto& f = r.feature_set();
  EXPECT_FALSE(f.defer_taskrun);
  if (!f.coop_taskrun)
    GTEST_SKIP() << "the kernel refused IORING_SETUP_COOP_TASKRUN (needs Linux >= 5.19)";
  nop_round_trip(r, 5);
  // Asking for less once does not stop later rings from getting the best set.
  uring best(setup_options{});
  if (!best.feature_set().defer_taskrun)
    GTEST_SKIP() << "no DEFER_TASKRUN on this kernel";
  EXPECT_TRUE(best.feature_set().defer_taskrun);
}

TEST(ring_setup, without_single_issuer) {
  uring r(setup_options{.single_issuer = false});
  EXPECT_FALSE(r.feature_set().single_issuer);
  EXPECT_FALSE(r.feature_set().defer_taskrun);
  nop_round_trip(r, 6);
}

TEST(ring_setup, tiny_entries_work) {
  for (unsigned entries : {1u, 2u, 3u}) {
    SCOPED_TRACE(entries);
    uring r(setup_options{.entries = entries});
    EXPECT_GE(r.sq_entries(), entries);
    EXPECT_LE(r.sq_entries(), 4u);
    EXPECT_GE(r.cq_entries(), r.sq_entries());
    for (std::uint64_t ud = 100; ud < 110; ++ud)
      nop_round_trip(r, ud);
  }
}

TEST(ring_setup, entry_counts) {
  uring zero(setup_options{.entries = 0});
  EXPECT_EQ(zero.sq_entries(), 256u) << "0 means the default depth";
  uring r(setup_options{.entries = 8});
  EXPECT_EQ(r.sq_entries(), 8u);
  EXPECT_EQ(r.cq_entries(), 32u) << "cq_entries 0 means 4 x entries";
  uring c(setup_options{.entries = 8, .cq_entries = 64});
  EXPECT_EQ(c.cq_entries(), 64u);
  uring odd(setup_options{.entries = 100});
  EXPECT_EQ(odd.sq_entries(), 128u);
  // Huge requests are clamped (IORING_SETUP_CLAMP), not refused.
  uring huge(setup_options{.entries = 1u << 20});
  EXPECT_GE(huge.sq_entries(), 4096u);
  EXPECT_GE(huge.fd(), 0);
}

// A CQ smaller than the SQ is refused by the kernel (EINVAL). That is the caller's
// mistake, not the kernel's age: the ring should round it up, or say so.
TEST(ring_setup, cq_smaller_than_sq_is_accepted_or_named) {
  try {
    uring r(setup_options{.entries = 64, .cq_entries = 16});
    EXPECT_GE(r.cq_entries(), r.sq_entries());
  } catch (const std::system_error& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "cq_entries") || contains(m, "completion queue"))
        << "the message blames the kernel instead of the options: " << m;
  }
}

TEST(ring_setup, many_rings_in_one_thread) {
  for (int i = 0; i < 64; ++i) {
    uring r(setup_options{.entries = 4});
    nop_round_trip(r, static_cast<std::uint64_t>(1000 + i));
  }
}

}  // namespace
