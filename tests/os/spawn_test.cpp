// os::command::spawn's two ways of starting a child, each test run on both: clone3
// (CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_CLEAR_SIGHAND, the default on x86-64)
// and the posix_spawn fallback. Both must give the child the same argv, environment,
// working directory, stdio and signal state, search PATH the same way, and report every
// exec failure (ENOENT, EACCES, ENOEXEC, a missing working directory) as the spawn's
// error without leaving a child, a zombie or a descriptor behind.
#include <gtest/gtest.h>
#include <saturn/os.hpp>
#include <saturn/saturn.hpp>
#include "os/os_test_util.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using saturn::result;
using saturn::task;
namespace os = saturn::os;
namespace fs = std::filesystem;
using os::stdio;

/// True when this process has no child at all, zombies included (waitid(P_ALL) says ECHILD).
using os_test::no_children_left;

int open_fds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

/// A scratch directory, removed at the end of the test.
struct scratch_dir {
  fs::path path;
  scratch_dir() {
    std::string t = (fs::temp_directory_path() / "saturn-spawn-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~scratch_dir() { fs::remove_all(path); }
  /// Writes `text` to `name` with `mode` and returns its path.
  std::string file(const std::string& name, const std::string& text, fs::perms mode) const {
    const fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    fs::permissions(p, mode);
    return p.string();
  }
};

using os_test::run_output;

class spawn : public ::testing::TestWithParam<os::detail::spawn_mode> {
 protected:
  void SetUp() override {
    os::detail::set_spawn_mode(GetParam());
    if (GetParam() == os::detail::spawn_mode::automatic && !os::detail::spawn_uses_clone3())
      GTEST_SKIP() << "no clone3 spawn on this architecture or kernel: the posix_spawn tests cover it";
  }
  void TearDown() override {
    os::detail::set_spawn_mode(os::detail::spawn_mode::automatic);
    EXPECT_TRUE(no_children_left()) << "a child (or zombie) of this process is left";
  }
  os::child_output output_of(os::command cmd) {
    auto out = rt.block_on(run_output(std::move(cmd)));
    EXPECT_TRUE(out) << out.err().message();
    return out ? *out : os::child_output{};
  }
  saturn::runtime rt;
};

TEST(spawn_mode, clone3_is_the_default_on_x86_64_and_can_be_turned_off) {
#if defined(__x86_64__)
  if (std::getenv("SATURN_SPAWN") == nullptr) {
    EXPECT_TRUE(os::detail::spawn_uses_clone3()) << "clone3 was refused on this kernel: the fallback runs";
  }
#endif
  os::detail::set_spawn_mode(os::detail::spawn_mode::posix_spawn);
  EXPECT_FALSE(os::detail::spawn_uses_clone3());
  os::detail::set_spawn_mode(os::detail::spawn_mode::automatic);
}

TEST_P(spawn, argv_and_a_large_environment_reach_the_child) {
  std::vector<std::string> args;
  std::string expected;
  for (int i = 0; i < 2000; ++i) {
    args.push_back("argument-" + std::to_string(i) + std::string(40, 'x'));
    expected += args.back() + "\n";
  }
  os::command cmd("/bin/sh");
  cmd.args({"-c", "for a; do echo \"$a\"; done; printf '%s' \"$BIG\"", "sh"});
  for (std::string& a : args)
    cmd.arg(a);
  cmd.env("BIG", std::string(100'000, 'e'));
  auto out = output_of(std::move(cmd));
  EXPECT_EQ(out.out, expected + std::string(100'000, 'e'));
  EXPECT_TRUE(out.status.success()) << out.status.describe();
}

TEST_P(spawn, env_clear_leaves_only_what_was_set) {
  auto out = output_of(os::command("/usr/bin/env").env_clear().env("A", "1").env("B", "2").env_remove("A"));
  EXPECT_EQ(out.out, "B=2\n");
}

TEST_P(spawn, path_search_skips_unexecutable_entries_and_reports_eacces_last) {
  scratch_dir d;
  const std::string script = "#!/bin/sh\necho found\n";
  d.file("a/saturn-prog", script, fs::perms::owner_read);  // not executable: EACCES, go on
  d.file("b/saturn-prog", script, fs::perms::owner_all);
  const char* old = std::getenv("PATH");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("PATH", ((d.path / "none").string() + ":" + (d.path / "a").string() + ":" + (d.path / "b").string()).c_str(),
           1);
  auto out = output_of(os::command("saturn-prog"));
  EXPECT_EQ(out.out, "found\n");
  // Only the unexecutable one on PATH: EACCES, not the ENOENT of the other entries.
  ::setenv("PATH", ((d.path / "none").string() + ":" + (d.path / "a").string() + ":" + (d.path / "none2").string()).c_str(),
           1);
  auto denied = os::command("saturn-prog").spawn();
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.err().message(), "spawn saturn-prog: Permission denied");
}

TEST_P(spawn, an_empty_path_element_is_the_working_directory) {
  scratch_dir d;
  d.file("saturn-here", "#!/bin/sh\necho here\n", fs::perms::owner_all);
  const char* old = std::getenv("PATH");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("PATH", "/no/such/dir:", 1);
  auto out = output_of(os::command("saturn-here").cwd(d.path.string()));
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(out.out, "here\n");
}

TEST_P(spawn, exec_failures_are_the_error_and_leave_nothing_behind) {
  scratch_dir d;
  const std::string garbage = d.file("garbage", std::string(64, '\x7f'), fs::perms::owner_all);
  const std::string plain = d.file("plain", "#!/bin/sh\n", fs::perms::owner_read);
  const int fds = open_fds();
  for (int round = 0; round < 50; ++round) {
    auto missing = os::command("/no/such/program").spawn();
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.err().message(), "spawn /no/such/program: No such file or directory");
    auto noexec = os::command(garbage).spawn();
    ASSERT_FALSE(noexec);
    EXPECT_EQ(noexec.err().message(), "spawn " + garbage + ": Exec format error");
    auto denied = os::command(plain).std_out(stdio::pipe).spawn();
    ASSERT_FALSE(denied);
    EXPECT_TRUE(denied.err() == std::errc::permission_denied) << denied.err().message();
    auto nodir = os::command("/bin/true").cwd("/no/such/dir").std_in(stdio::null).spawn();
    ASSERT_FALSE(nodir);
    EXPECT_EQ(nodir.err().message(), "spawn /bin/true (cwd /no/such/dir): No such file or directory");
  }
  EXPECT_EQ(open_fds(), fds) << "a failed spawn left a descriptor open (pidfd, pipe or /dev/null)";
  EXPECT_TRUE(no_children_left());
}

TEST_P(spawn, null_stdio_reads_eof_and_swallows_output) {
  auto out = output_of(
      os::command("/bin/sh").args({"-c", "cat; echo to-null; echo to-err >&2; echo done >&2"}).std_in(stdio::null));
  EXPECT_EQ(out.out, "to-null\n");  // stdin at EOF at once: cat ends
  auto quiet = output_of(os::command("/bin/sh").args({"-c", "echo x; echo y >&2"}));
  EXPECT_EQ(quiet.out, "x\n");
  EXPECT_EQ(quiet.err, "y\n");
  os::command devnull("/bin/sh");
  devnull.args({"-c", "echo lost; test -c /proc/self/fd/1 && ! read x"}).std_in(stdio::null).std_out(stdio::null);
  auto st = rt.block_on([](os::command cmd) -> task<result<os::exit_status>> {
    co_return co_await cmd.status();
  }(std::move(devnull)));
  ASSERT_TRUE(st) << st.err().message();
  EXPECT_TRUE(st->success()) << "stdout is not a character device, or stdin gave a line: " << st->describe();
}

/// The `Sig...:` masks of the child's /proc/self/status, as numbers.
std::uint64_t mask_line(const std::string& status, const std::string& key) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(key + ":"))
      return std::stoull(line.substr(key.size() + 1), nullptr, 16);
  ADD_FAILURE() << key << " not in " << status;
  return ~0ULL;
}

constexpr std::uint64_t bit(int sig) { return 1ULL << (sig - 1); }

void on_usr1(int) {}

TEST_P(spawn, the_child_starts_with_no_signal_blocked_sigpipe_at_default_and_ignored_ones_kept) {
  struct sigaction ign{}, handler{}, old_pipe{}, old_usr1{}, old_usr2{};
  ign.sa_handler = SIG_IGN;
  handler.sa_handler = on_usr1;
  ASSERT_EQ(::sigaction(SIGPIPE, &ign, &old_pipe), 0);
  ASSERT_EQ(::sigaction(SIGUSR2, &ign, &old_usr2), 0);
  ASSERT_EQ(::sigaction(SIGUSR1, &handler, &old_usr1), 0);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGCHLD);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &block, &old_mask), 0);
  // Spawned from this (blocking) thread: spawn() needs no loop.
  auto kid = os::command("/bin/cat").arg("/proc/self/status").std_out(stdio::pipe).spawn();
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  ::sigaction(SIGUSR2, &old_usr2, nullptr);
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
  ASSERT_TRUE(kid) << kid.err().message();
  auto out = rt.block_on(kid->wait_with_output());
  ASSERT_TRUE(out) << out.err().message();
  EXPECT_EQ(mask_line(out->out, "SigBlk"), 0u);
  const std::uint64_t ignored = mask_line(out->out, "SigIgn");
  EXPECT_EQ(ignored & bit(SIGPIPE), 0u) << "SIGPIPE stayed ignored";
  EXPECT_NE(ignored & bit(SIGUSR2), 0u) << "an ignored signal stays ignored across exec (POSIX)";
  EXPECT_EQ(ignored & bit(SIGUSR1), 0u);
  EXPECT_EQ(mask_line(out->out, "SigCgt"), 0u);
}

task<void> spawn_many(std::atomic<int>& next, int total, std::atomic<int>& ok) {
  while (next.fetch_add(1) < total) {
    auto kid = os::command("/bin/sh").args({"-c", "read x; echo \"$x\"; echo e >&2"}).std_in(stdio::pipe)
                   .std_out(stdio::pipe).std_err(stdio::pipe).spawn();
    if (!kid)
      continue;
    auto w = co_await kid->std_in().write_all("line\n");
    if (!w)
      continue;
    auto out = co_await kid->wait_with_output();
    if (out && out->status.success() && out->out == "line\n" && out->err == "e\n")
      ok.fetch_add(1);
  }
}

TEST_P(spawn, concurrent_spawns_with_pipes_on_two_workers) {
  constexpr int total = 600;
  saturn::pool_options po;
  po.threads = 2;
  saturn::thread_pool pool(po);
  std::atomic<int> next{0}, ok{0};
  std::vector<saturn::join_handle<void>> hs;
  for (int i = 0; i < 16; ++i)
    hs.push_back(pool.spawn_on(static_cast<unsigned>(i) % pool.threads(), spawn_many(next, total, ok)));
  for (auto& h : hs)
    pool.block_on([](saturn::join_handle<void> j) -> task<void> { co_await std::move(j); }(std::move(h)));
  EXPECT_EQ(ok.load(), total);
}

INSTANTIATE_TEST_SUITE_P(both, spawn,
                         ::testing::Values(os::detail::spawn_mode::automatic, os::detail::spawn_mode::posix_spawn),
                         [](const ::testing::TestParamInfo<os::detail::spawn_mode>& p) {
                           return p.param == os::detail::spawn_mode::automatic ? "clone3" : "posix_spawn";
                         });

}  // namespace
