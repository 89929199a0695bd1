// os::command / os::child with real processes (/bin/sh, /bin/cat, /usr/bin/env, ...):
// argv, environment and working directory reach the child; stdout/stderr are captured,
// stdin is fed and closed; megabytes through the pipes without deadlock; exit codes and
// killing signals are reported; wait_for times out and the child stays waitable; a
// cancelled wait leaves the child waitable; kill-on-destroy and destroy-without-wait
// leave no zombie (on a loop thread: ring poll; off one: the orphan list); spawn errors
// name the program; only stdio reaches the child; 10,000 short children across a
// two-worker pool, with IORING_OP_WAITID and with the poll fallback, leave no zombie.
#include <gtest/gtest.h>
#include <saturn/ext/submit.hpp>
#include <saturn/os.hpp>
#include <saturn/saturn.hpp>
#include "os/os_test_util.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
namespace os = saturn::os;
using os::stdio;

/// Pids of this process's children that are zombies (state Z in /proc/<pid>/stat).
std::vector<int> zombie_children() {
  std::vector<int> out;
  const int me = ::getpid();
  DIR* d = ::opendir("/proc");
  if (d == nullptr)
    return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(f, line))
      continue;
    const auto paren = line.rfind(')');  // comm may hold spaces and parentheses
    if (paren == std::string::npos)
      continue;
    std::istringstream rest(line.substr(paren + 1));
    char state = 0;
    int ppid = 0;
    rest >> state >> ppid;
    if (state == 'Z' && ppid == me)
      out.push_back(std::atoi(e->d_name));
  }
  ::closedir(d);
  return out;
}

/// True when this process has no child at all (waitid(P_ALL) says ECHILD).
using os_test::no_children_left;

/// Runs the mode under test for one scope, then restores automatic.
struct wait_mode_scope {
  explicit wait_mode_scope(os::detail::child_wait_mode m) { os::detail::set_child_wait_mode(m); }
  ~wait_mode_scope() { os::detail::set_child_wait_mode(os::detail::child_wait_mode::automatic); }
};

using os_test::run_output;

os::child_output output_of(saturn::runtime& rt, os::command cmd) {
  auto out = rt.block_on(run_output(std::move(cmd)));
  EXPECT_TRUE(out) << out.err().message();
  return out ? *out : os::child_output{};
}

TEST(child, the_zombie_oracle_sees_a_zombie) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0)
    ::_exit(0);
  bool seen = false;
  for (int i = 0; i < 400 && !seen; ++i) {
    for (int z : zombie_children())
      seen = seen || z == pid;
    if (!seen)
      std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(seen) << "zombie_children() missed an unreaped child";
  EXPECT_FALSE(no_children_left());
  ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
  EXPECT_TRUE(zombie_children().empty());
}

TEST(child, the_ring_has_waitid_on_this_kernel) {
  saturn::runtime rt;
  if (!saturn::ext::supports_waitid(rt.loop()))
    GTEST_SKIP() << "this kernel has no IORING_OP_WAITID (Linux < 6.7): only the poll path runs";
  EXPECT_TRUE(rt.block_on([]() -> task<bool> { co_return os::detail::child_wait_uses_waitid(); }()));
  wait_mode_scope poll(os::detail::child_wait_mode::poll);
  EXPECT_FALSE(rt.block_on([]() -> task<bool> { co_return os::detail::child_wait_uses_waitid(); }()));
}

TEST(child, argv_reaches_the_child_unchanged) {
  saturn::runtime rt;
  auto out = output_of(rt, os::command("/bin/sh").args({"-c", "printf '%s|' \"$0\" \"$@\"", "zero", "a", "b c", ""}));
  EXPECT_EQ(out.out, "zero|a|b c||");
  EXPECT_TRUE(out.status.success()) << out.status.describe();
}

TEST(child, a_name_without_a_slash_is_found_in_path) {
  saturn::runtime rt;
  auto out = output_of(rt, os::command("echo").arg("hi"));
  EXPECT_EQ(out.out, "hi\n");
}

TEST(child, environment_changes_reach_the_child) {
  ::setenv("SATURN_CHILD_TEST_KEEP", "kept", 1);
  ::setenv("SATURN_CHILD_TEST_DROP", "dropped", 1);
  saturn::runtime rt;
  auto out = output_of(rt, os::command("/usr/bin/env")
                               .env("SATURN_CHILD_TEST_NEW", "a=b c")
                               .env("SATURN_CHILD_TEST_KEEP", "changed")
                               .env_remove("SATURN_CHILD_TEST_DROP"));
  EXPECT_NE(out.out.find("SATURN_CHILD_TEST_NEW=a=b c\n"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("SATURN_CHILD_TEST_KEEP=changed\n"), std::string::npos) << out.out;
  EXPECT_EQ(out.out.find("SATURN_CHILD_TEST_DROP"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("PATH="), std::string::npos) << "the parent's environment is inherited";
  // Unchanged: the parent's environment as is.
  auto plain = output_of(rt, os::command("/usr/bin/env"));
  EXPECT_NE(plain.out.find("SATURN_CHILD_TEST_DROP=dropped\n"), std::string::npos);
  auto cleared = output_of(rt, os::command("/usr/bin/env").env_clear().env("ONLY", "this"));
  EXPECT_EQ(cleared.out, "ONLY=this\n");
  ::unsetenv("SATURN_CHILD_TEST_KEEP");
  ::unsetenv("SATURN_CHILD_TEST_DROP");
}

TEST(child, the_working_directory_is_set) {
  saturn::runtime rt;
  const std::string dir = std::filesystem::canonical(std::filesystem::temp_directory_path()).string();
  auto out = output_of(rt, os::command("/bin/pwd").arg("-P").cwd(dir));
  EXPECT_EQ(out.out, dir + "\n");
  auto bad = os::command("/bin/pwd").cwd("/no/such/dir").spawn();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.err().message(), "spawn /bin/pwd (cwd /no/such/dir): No such file or directory");
}

TEST(child, a_missing_program_is_an_error_naming_it) {
  auto r = os::command("/no/such").spawn();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().message(), "spawn /no/such: No such file or directory");
  EXPECT_TRUE(r.err() == std::errc::no_such_file_or_directory);
  auto p = os::command("saturn-no-such-program").spawn();
  ASSERT_FALSE(p);
  EXPECT_EQ(p.err().message(), "spawn saturn-no-such-program: No such file or directory");
  auto dir = os::command("/").spawn();  // not executable
  ASSERT_FALSE(dir);
  EXPECT_TRUE(dir.err() == std::errc::permission_denied) << dir.err().message();
  EXPECT_TRUE(zombie_children().empty());
}

TEST(child, stdout_and_stderr_are_captured_and_the_code_reported) {
  saturn::runtime rt;
  auto out = output_of(rt, os::command("/bin/sh").args({"-c", "echo out; echo err >&2; exit 7"}));
  EXPECT_EQ(out.out, "out\n");
  EXPECT_EQ(out.err, "err\n");
  EXPECT_TRUE(out.status.exited());
  EXPECT_EQ(out.status.code, 7);
  EXPECT_FALSE(out.status.success());
  EXPECT_EQ(out.status.describe(), "exit code 7");
}

task<result<os::exit_status>> status_of(os::command cmd) { co_return co_await cmd.status(); }

TEST(child, exit_codes) {
  saturn::runtime rt;
  for (int code : {0, 1, 42, 255}) {
    auto st = rt.block_on(status_of(os::command("/bin/sh").args({"-c", "exit " + std::to_string(code)})));
    ASSERT_TRUE(st) << st.err().message();
    EXPECT_TRUE(st->exited());
    EXPECT_EQ(st->code, code);
    EXPECT_EQ(st->signal, 0);
  }
}

TEST(child, stdin_is_fed_and_closing_it_is_eof) {
  saturn::runtime rt;
  auto text = rt.block_on([]() -> task<result<std::string>> {
    auto kid = os::command("/bin/cat").std_in(stdio::pipe).std_out(stdio::pipe).spawn();
    if (!kid)
      co_return kid.err();
    auto w = co_await kid->std_in().write_all("hello\nworld");
    if (!w)
      co_return w.err();
    auto closing = kid->std_in().close();
    auto closed = co_await closing;
    if (!closed)
      co_return closed.err();
    EXPECT_FALSE(kid->std_in().is_open());
    auto got = co_await kid->std_out().read_all();  // ends only because cat saw EOF and exited
    auto st = co_await kid->wait();
    EXPECT_TRUE(st && st->success());
    co_return got;
  }());
  ASSERT_TRUE(text) << text.err().message();
  EXPECT_EQ(*text, "hello\nworld");
}

TEST(child, megabytes_both_ways_without_deadlock) {
  saturn::runtime rt;
  // 8 MiB from a child that only writes.
  auto big = output_of(rt, os::command("/usr/bin/head").args({"-c", "8388608", "/dev/zero"}));
  EXPECT_EQ(big.out.size(), 8u << 20);
  EXPECT_TRUE(big.status.success());
  // 6 MiB through cat while its output is read: neither pipe may fill up and stall.
  std::string input(6u << 20, '\0');
  for (std::size_t i = 0; i < input.size(); ++i)
    input[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  auto echoed = rt.block_on([](const std::string& in) -> task<result<std::string>> {
    auto kid = os::command("/bin/cat").std_in(stdio::pipe).std_out(stdio::pipe).spawn();
    if (!kid)
      co_return kid.err();
    auto feed = [](os::pipe_stream& s, const std::string& data) -> task<result<void>> {
      auto w = co_await s.write_all(data);
      if (!w)
        co_return w;
      auto closing = s.close();
      co_return co_await closing;
    };
    auto both = co_await saturn::when_all(feed(kid->std_in(), in), kid->std_out().read_all());
    auto st = co_await kid->wait();
    EXPECT_TRUE(st && st->success());
    if (!std::get<0>(both))
      co_return std::get<0>(both).err();
    co_return std::move(std::get<1>(both));
  }(input));
  ASSERT_TRUE(echoed) << echoed.err().message();
  EXPECT_EQ(echoed->size(), input.size());
  EXPECT_TRUE(*echoed == input);
}

TEST(child, killed_by_a_signal_is_reported_as_such) {
  saturn::runtime rt;
  auto self = rt.block_on(status_of(os::command("/bin/sh").args({"-c", "kill -TERM $$"})));
  ASSERT_TRUE(self) << self.err().message();
  EXPECT_FALSE(self->exited());
  EXPECT_EQ(self->signal, SIGTERM);
  EXPECT_EQ(self->describe(), "killed by signal 15 (Terminated)");

  auto st = rt.block_on([]() -> task<result<os::exit_status>> {
    auto kid = os::command("/bin/sleep").arg("30").spawn();
    if (!kid)
      co_return kid.err();
    auto k = kid->kill(SIGKILL);
    EXPECT_TRUE(k) << k.err().message();
    auto s = co_await kid->wait();
    // Reaped: the status stays, a further kill finds no process.
    auto again = co_await kid->wait();
    EXPECT_TRUE(again && s && *again == *s);
    auto late = kid->kill(SIGTERM);
    EXPECT_FALSE(late);
    EXPECT_TRUE(late.err() == std::errc::no_such_process);
    co_return s;
  }());
  ASSERT_TRUE(st) << st.err().message();
  EXPECT_EQ(st->signal, SIGKILL);
}

TEST(child, wait_for_times_out_then_kill_ends_the_child) {
  saturn::runtime rt;
  auto st = rt.block_on([]() -> task<result<os::exit_status>> {
    auto kid = os::command("/bin/sleep").arg("30").spawn();
    if (!kid)
      co_return kid.err();
    const auto t0 = saturn::clock::now();
    auto timed = co_await kid->wait_for(50ms);
    EXPECT_TRUE(timed) << timed.err().message();
    EXPECT_FALSE(timed && timed->has_value()) << "sleep 30 exited within 50 ms";
    EXPECT_GE(saturn::clock::now() - t0, 45ms);
    auto running = kid->try_wait();
    EXPECT_TRUE(running && !running->has_value());
    auto k = kid->kill(SIGTERM);
    EXPECT_TRUE(k);
    auto done = co_await kid->wait_for(5s);
    if (!done)
      co_return done.err();
    EXPECT_TRUE(done->has_value());
    co_return done->value_or(os::exit_status{});
  }());
  ASSERT_TRUE(st) << st.err().message();
  EXPECT_EQ(st->signal, SIGTERM);
}

void cancelled_wait_leaves_the_child_waitable() {
  saturn::runtime rt;
  auto st = rt.block_on([]() -> task<result<os::exit_status>> {
    auto kid = os::command("/bin/sleep").arg("30").spawn();
    if (!kid)
      co_return kid.err();
    auto timed = co_await saturn::with_timeout(30ms, kid->wait());
    EXPECT_FALSE(timed);
    EXPECT_TRUE(!timed && timed.err() == std::errc::timed_out);
    auto running = kid->try_wait();
    EXPECT_TRUE(running && !running->has_value()) << "the cancelled wait reaped the child";
    EXPECT_TRUE(kid->kill());
    co_return co_await kid->wait();
  }());
  ASSERT_TRUE(st) << st.err().message();
  EXPECT_EQ(st->signal, SIGKILL);
  EXPECT_TRUE(zombie_children().empty());
}

TEST(child, a_cancelled_wait_leaves_the_child_waitable) { cancelled_wait_leaves_the_child_waitable(); }

TEST(child, a_cancelled_poll_wait_leaves_the_child_waitable) {
  wait_mode_scope poll(os::detail::child_wait_mode::poll);
  cancelled_wait_leaves_the_child_waitable();
}

/// Polls `done()` every 5 ms for up to `limit`, on the runtime (its loop keeps running).
bool eventually(saturn::runtime& rt, std::chrono::milliseconds limit, auto done) {
  return rt.block_on([](std::chrono::milliseconds lim, auto d) -> task<bool> {
    const auto end = saturn::clock::now() + lim;
    while (!d()) {
      if (saturn::clock::now() > end)
        co_return false;
      co_await saturn::sleep_for(5ms);
    }
    co_return true;
  }(limit, done));
}

TEST(child, kill_on_destroy_kills_and_leaves_no_zombie) {
  saturn::runtime rt;
  pid_t pid = -1;
  {
    auto kid = os::command("/bin/sleep").arg("30").kill_on_destroy().spawn();
    ASSERT_TRUE(kid) << kid.err().message();
    pid = kid->pid();
    EXPECT_EQ(::kill(pid, 0), 0);
    rt.block_on([](os::child) -> task<void> { co_return; }(std::move(*kid)));  // destroyed on the loop
  }
  // The ring poll reaps it once the SIGKILL has landed: its /proc entry goes.
  EXPECT_TRUE(eventually(rt, 5000ms, [pid] { return ::kill(pid, 0) != 0 && errno == ESRCH; }))
      << "pid " << pid << " was not reaped";
  EXPECT_TRUE(zombie_children().empty());
}

TEST(child, destroying_an_unwaited_child_leaves_no_zombie) {
  saturn::runtime rt;
  std::vector<pid_t> pids;
  for (int i = 0; i < 8; ++i) {
    auto kid = os::command("/bin/sh").args({"-c", "sleep 0.05"}).spawn();
    ASSERT_TRUE(kid) << kid.err().message();
    pids.push_back(kid->pid());
    rt.block_on([](os::child) -> task<void> { co_return; }(std::move(*kid)));
  }
  EXPECT_TRUE(eventually(rt, 5000ms, [&] {
    for (pid_t p : pids)
      if (::kill(p, 0) == 0)
        return false;
    return true;
  })) << "an orphan was not reaped after it exited";
  EXPECT_TRUE(zombie_children().empty());
}

TEST(child, orphans_of_a_thread_without_a_loop_are_swept) {
  pid_t pid = -1;
  std::thread([&pid] {
    auto kid = os::command("/bin/sleep").arg("30").kill_on_destroy().spawn();
    ASSERT_TRUE(kid);
    pid = kid->pid();
  }).join();  // destroyed here, on a thread with no event loop: the orphan list
  ASSERT_GT(pid, 0);
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (os::reap_orphans() != 0 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(os::reap_orphans(), 0u);
  EXPECT_NE(::kill(pid, 0), 0);
  EXPECT_TRUE(zombie_children().empty());
}

/// Descriptors of this process that a child would inherit (not close-on-exec).
std::set<int> inheritable_fds() {
  std::set<int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::atoi(e.path().filename().c_str());
    const int fl = ::fcntl(fd, F_GETFD);
    if (fl >= 0 && (fl & FD_CLOEXEC) == 0)
      out.insert(fd);
  }
  return out;
}

TEST(child, only_its_stdio_reaches_the_child) {
  saturn::runtime rt;
  std::set<int> allowed = inheritable_fds();  // before saturn opens any: what a test runner passed down
  // Other children's pipes are open while this one starts: none of them may leak in.
  auto a = os::command("/bin/cat").std_in(stdio::pipe).std_out(stdio::pipe).std_err(stdio::pipe).spawn();
  auto b = os::command("/bin/cat").std_in(stdio::pipe).std_out(stdio::pipe).spawn();
  ASSERT_TRUE(a && b);
  for (int fd : {0, 1, 2})
    allowed.insert(fd);
  int ls_own = 0;  // ls's own directory handle: the lowest descriptor free in the child
  while (allowed.count(ls_own))
    ++ls_own;
  allowed.insert(ls_own);
  auto out = output_of(rt, os::command("/bin/ls").arg("/proc/self/fd"));
  std::istringstream in(out.out);
  int fd = 0;
  int seen = 0;
  while (in >> fd) {
    ++seen;
    EXPECT_TRUE(allowed.count(fd)) << "descriptor " << fd << " leaked into the child";
  }
  EXPECT_GE(seen, 3);
  EXPECT_TRUE(a->kill() && b->kill());
}

task<void> spawn_many(std::atomic<int>& next, int total, std::atomic<int>& ok, std::atomic<int>& failed) {
  while (next.fetch_add(1) < total) {
    auto st = co_await os::command("/bin/true").status();
    if (st && st->success())
      ok.fetch_add(1);
    else
      failed.fetch_add(1);
  }
}

void ten_thousand_children_leave_no_zombie() {
#ifdef SATURN_ASAN
  // The release build keeps issue #32's count of 10,000 (~30 s, the kernel's fork rate);
  // under ASan 2,000 run the same paths, for memory errors, in a fifth of the time.
  constexpr int total = 2'000;
#else
  constexpr int total = 10'000;
#endif
  constexpr int in_flight = 64;
  saturn::pool_options po;
  po.threads = 2;
  saturn::thread_pool pool(po);
  std::atomic<int> next{0}, ok{0}, failed{0};
  std::vector<saturn::join_handle<void>> hs;
  for (int i = 0; i < in_flight; ++i)
    hs.push_back(pool.spawn_on(static_cast<unsigned>(i) % pool.threads(), spawn_many(next, total, ok, failed)));
  for (auto& h : hs)
    pool.block_on([](saturn::join_handle<void> j) -> task<void> { co_await std::move(j); }(std::move(h)));
  EXPECT_EQ(ok.load(), total);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_TRUE(zombie_children().empty());
  EXPECT_TRUE(no_children_left()) << "a child of this process is left";
}

TEST(child, ten_thousand_short_children_leave_no_zombie) {
  saturn::runtime rt;
  if (!saturn::ext::supports_waitid(rt.loop()))
    GTEST_SKIP() << "no IORING_OP_WAITID on this kernel (the poll test covers the fallback)";
  ten_thousand_children_leave_no_zombie();
}

TEST(child, ten_thousand_short_children_leave_no_zombie_poll_fallback) {
  wait_mode_scope poll(os::detail::child_wait_mode::poll);
  ten_thousand_children_leave_no_zombie();
}

TEST(child, with_sigchld_ignored_the_status_is_lost_and_said_so) {
  // The kernel reaps the children itself: wait() (or, if the child was gone before its
  // pidfd was opened, spawn()) fails with ECHILD / ESRCH, as child's class comment says.
  struct sigaction ign{}, old{};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ASSERT_EQ(::sigaction(SIGCHLD, &ign, &old), 0);
  saturn::runtime rt;
  for (bool poll : {false, true}) {
    os::detail::set_child_wait_mode(poll ? os::detail::child_wait_mode::poll : os::detail::child_wait_mode::automatic);
    auto kid = os::command("/bin/sh").args({"-c", "sleep 0.02"}).spawn();
    if (!kid) {
      EXPECT_TRUE(kid.err() == std::errc::no_such_process) << kid.err().message();
      continue;
    }
    auto st = rt.block_on(kid->wait());
    ASSERT_FALSE(st) << "a status came back although the kernel reaped the child";
    EXPECT_EQ(st.err().message(), "wait: No child processes");
  }
  os::detail::set_child_wait_mode(os::detail::child_wait_mode::automatic);
  ::sigaction(SIGCHLD, &old, nullptr);
  EXPECT_TRUE(zombie_children().empty());
}

TEST(child, children_killed_by_signals_leave_no_zombie) {
  saturn::pool_options po;
  po.threads = 2;
  saturn::thread_pool pool(po);
  auto killed = pool.block_on([]() -> task<int> {
    std::vector<os::child> kids;
    for (int i = 0; i < 32; ++i) {
      auto k = os::command("/bin/sleep").arg("30").spawn();
      if (k)
        kids.push_back(std::move(*k));
    }
    int n = 0;
    for (std::size_t i = 0; i < kids.size(); ++i) {
      (void)kids[i].kill(i % 2 ? SIGKILL : SIGTERM);
      auto st = co_await kids[i].wait();
      if (st && st->signal == (i % 2 ? SIGKILL : SIGTERM))
        ++n;
    }
    co_return n;
  }());
  EXPECT_EQ(killed, 32);
  EXPECT_TRUE(zombie_children().empty());
}

}  // namespace
