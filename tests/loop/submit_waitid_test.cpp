// submit_waitid (IORING_OP_WAITID, defined past liburing 2.3's enum) with P_PIDFD on real
// forked children, in both ring modes: the exit code and the killing signal arrive in the
// siginfo_t as waitid(2) fills it, the child is reaped (a second waitid says ECHILD), a
// cancelled wait leaves the child unreaped, and WNOHANG on a running child returns at once.
#include <saturn/ext/submit.hpp>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::event_loop;
using saturn::loop_options;

class submit_waitid : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts() const { return loop_options{.defer_taskrun = GetParam()}; }
  void SetUp() override {
    event_loop probe(opts());
    if (!saturn::ext::supports_waitid(probe))
      GTEST_SKIP() << "no IORING_OP_WAITID (Linux < 6.7)";
  }
};

using saturn_test::run_until_done;

/// Forks a child that sleeps `ms` then exits with `code`; its pidfd.
int fork_child(int code, int ms, pid_t* pid_out) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::usleep(static_cast<useconds_t>(ms) * 1000);
    ::_exit(code);
  }
  *pid_out = pid;
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

TEST_P(submit_waitid, reports_the_exit_code_and_reaps) {
  event_loop loop(opts());
  pid_t pid = -1;
  const int pidfd = fork_child(7, 20, &pid);
  ASSERT_GE(pidfd, 0);
  siginfo_t si{};
  raw_op op;
  saturn::ext::submit_waitid(loop, &op, P_PIDFD, pidfd, &si, WEXITED);
  run_until_done(loop, op);
  ASSERT_EQ(op.res, 0) << std::strerror(-op.res);
  EXPECT_EQ(si.si_signo, SIGCHLD);
  EXPECT_EQ(si.si_code, CLD_EXITED);
  EXPECT_EQ(si.si_pid, pid);
  EXPECT_EQ(si.si_status, 7);
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1) << "the child was not reaped";
  EXPECT_EQ(errno, ECHILD);
  ::close(pidfd);
}

TEST_P(submit_waitid, reports_the_killing_signal) {
  event_loop loop(opts());
  pid_t pid = -1;
  const int pidfd = fork_child(0, 10'000, &pid);
  ASSERT_GE(pidfd, 0);
  siginfo_t si{};
  raw_op op;
  saturn::ext::submit_waitid(loop, &op, P_PIDFD, pidfd, &si, WEXITED);
  ::kill(pid, SIGKILL);
  run_until_done(loop, op);
  ASSERT_EQ(op.res, 0) << std::strerror(-op.res);
  EXPECT_EQ(si.si_code, CLD_KILLED);
  EXPECT_EQ(si.si_status, SIGKILL);
  ::close(pidfd);
}

TEST_P(submit_waitid, a_cancelled_wait_leaves_the_child_and_wnohang_returns_at_once) {
  event_loop loop(opts());
  pid_t pid = -1;
  const int pidfd = fork_child(3, 10'000, &pid);
  ASSERT_GE(pidfd, 0);
  siginfo_t si{};
  raw_op op, cancel;
  saturn::ext::submit_waitid(loop, &op, P_PIDFD, pidfd, &si, WEXITED);
  loop.run_once(false);
  saturn::ext::submit_cancel(loop, &op, &cancel);
  run_until_done(loop, op);
  EXPECT_EQ(op.res, -ECANCELED);
  run_until_done(loop, cancel);
  // Still running and unreaped: WNOHANG finds nothing (si_pid 0) and completes at once.
  siginfo_t none{};
  none.si_pid = 12345;
  raw_op nohang;
  saturn::ext::submit_waitid(loop, &nohang, P_PIDFD, pidfd, &none, WEXITED | WNOHANG);
  run_until_done(loop, nohang);
  EXPECT_EQ(nohang.res, 0);
  EXPECT_EQ(none.si_pid, 0);
  ::kill(pid, SIGKILL);
  siginfo_t end{};
  ASSERT_EQ(::waitid(P_PIDFD, static_cast<id_t>(pidfd), &end, WEXITED), 0) << "the cancel reaped the child";
  EXPECT_EQ(end.si_status, SIGKILL);
  ::close(pidfd);
}

TEST_P(submit_waitid, a_pidfd_of_no_child_is_echild) {
  event_loop loop(opts());
  const int self = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
  ASSERT_GE(self, 0);
  siginfo_t si{};
  raw_op op;
  saturn::ext::submit_waitid(loop, &op, P_PIDFD, self, &si, WEXITED | WNOHANG);
  run_until_done(loop, op);
  EXPECT_EQ(op.res, -ECHILD);
  ::close(self);
}

INSTANTIATE_TEST_SUITE_P(modes, submit_waitid, ::testing::Bool(), mode_name);

}  // namespace
