// A thread_pool whose worker threads the OS refuses part-way (RLIMIT_NPROC) throws a
// std::system_error that says which worker failed and what to change, after stopping and
// joining the workers it had started: the process goes on (before, the running workers'
// std::thread objects were destroyed joinable and std::terminate aborted it).
//
// The limit is set in a forked child running as nobody: root is exempt from RLIMIT_NPROC.
#include <saturn/saturn.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <system_error>

namespace {

constexpr uid_t k_nobody = 65534;

/// Child exit codes: 0 ok, 2 no error thrown, 3 wrong message, 4 the pool afterwards
/// failed, 5 cannot drop privileges, 6 the wrong exception.
int child_body() {
  if (::geteuid() == 0 && (::setresgid(k_nobody, k_nobody, k_nobody) != 0 || ::setresuid(k_nobody, k_nobody, k_nobody) != 0))
    return 5;
  // This process counts as one; two more threads fit, the third of eight is refused (or
  // earlier if nobody has other processes).
  const rlimit lim{3, 64};  // soft 3; the hard limit lets it be raised again below
  if (::setrlimit(RLIMIT_NPROC, &lim) != 0)
    return 5;
  try {
    saturn::thread_pool pool(saturn::pool_options{.threads = 8});
    return 2;
  } catch (const std::system_error& e) {
    const std::string what = e.what();
    if (e.code() != std::errc::resource_unavailable_try_again || what.find("cannot start worker thread") == std::string::npos ||
        what.find("of 8") == std::string::npos || what.find("ulimit -u") == std::string::npos)
      return 3;
  } catch (...) {
    return 6;
  }
  // The process is still usable: with room again (TSan's own thread counts too), a pool
  // starts, runs and stops.
  const rlimit room{64, 64};
  if (::setrlimit(RLIMIT_NPROC, &room) != 0)
    return 5;
  try {
    saturn::thread_pool one(saturn::pool_options{.threads = 1});
    return one.block_on([]() -> saturn::task<int> { co_return 0; }()) == 0 ? 0 : 4;
  } catch (...) {
    return 4;
  }
}

TEST(sched_start_failure, refused_thread_throws_after_joining_the_started_workers) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to run the child as another user (RLIMIT_NPROC counts per user)";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0)
    ::_exit(child_body());
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                 << " (std::terminate on a joinable worker thread?)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child code (see child_body)";
}

}  // namespace
