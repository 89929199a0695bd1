// fs::walk against std::filesystem::recursive_directory_iterator (entry sets and
// types), pruning, depth limits, errors, symlink loops, stopping; on a runtime and on a
// two-worker thread_pool.
#include "fs_test_support.hpp"

#include <saturn/fs/walk.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/task_group.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace {

namespace fs = saturn::fs;
namespace stdfs = std::filesystem;
using fs_test::scratch_dir;
using fs_test::touch;

enum class where { runtime, pool };

/// Runs `t` to completion on a runtime or on a two-worker thread_pool.
template <class T>
T run_on(where w, saturn::task<T> t) {
  if (w == where::runtime) {
    saturn::runtime rt;
    return rt.block_on(std::move(t));
  }
  saturn::thread_pool pool(saturn::pool_options{.threads = 2});
  return pool.block_on(std::move(t));
}

/// Entries seen by a visitor: path -> (type, depth), filled from any worker.
struct seen {
  std::mutex m;
  std::map<std::string, std::pair<fs::entry_type, unsigned>> entries;
  std::atomic<int> duplicates{0};
  fs::walk_visitor visitor(fs::walk_action (*decide)(const fs::walk_entry&) = nullptr) {
    return [this, decide](const fs::walk_entry& e) {
      {
        std::lock_guard lock(m);
        if (!entries.emplace(std::string(e.path), std::pair{e.type, e.depth}).second)
          ++duplicates;
      }
      // The name is the path's last component, and parent_fd can look it up.
      if (e.depth > 0) {
        EXPECT_EQ(e.path.substr(e.path.size() - e.name.size()), e.name);
        struct ::stat sb;
        EXPECT_EQ(::fstatat(e.parent_fd, std::string(e.name).c_str(), &sb, AT_SYMLINK_NOFOLLOW), 0) << e.path;
      }
      return decide != nullptr ? decide(e) : fs::walk_action::proceed;
    };
  }
};

fs::entry_type type_of(const stdfs::directory_entry& e) {
  switch (e.symlink_status().type()) {
    case stdfs::file_type::regular: return fs::entry_type::regular;
    case stdfs::file_type::directory: return fs::entry_type::directory;
    case stdfs::file_type::symlink: return fs::entry_type::symlink;
    case stdfs::file_type::fifo: return fs::entry_type::fifo;
    case stdfs::file_type::socket: return fs::entry_type::socket;
    case stdfs::file_type::block: return fs::entry_type::block;
    case stdfs::file_type::character: return fs::entry_type::character;
    default: return fs::entry_type::unknown;
  }
}

/// The oracle: every entry below `root` (symlinks not followed) with its type and depth,
/// ROOT included at depth 0, down to `max_depth`.
std::map<std::string, std::pair<fs::entry_type, unsigned>> walk_oracle(const std::string& root,
                                                                   unsigned max_depth = fs::k_walk_unlimited_depth) {
  std::map<std::string, std::pair<fs::entry_type, unsigned>> out;
  out.emplace(root, std::pair{fs::entry_type::directory, 0u});
  for (auto it = stdfs::recursive_directory_iterator(root); it != stdfs::recursive_directory_iterator(); ++it) {
    const auto depth = static_cast<unsigned>(it.depth()) + 1;
    if (depth > max_depth)
      continue;
    out.emplace(it->path().string(), std::pair{type_of(*it), depth});
  }
  return out;
}

/// Counts of an oracle map: (files, dirs).
std::pair<std::uint64_t, std::uint64_t> counts_of(const std::map<std::string, std::pair<fs::entry_type, unsigned>>& m) {
  std::uint64_t dirs = 0;
  for (const auto& [p, v] : m)
    dirs += v.first == fs::entry_type::directory ? 1 : 0;
  return {m.size() - dirs, dirs};
}

/// A generated tree (gen-tree, 3 x 3 levels, 4 files each) plus a symlink to a file, a
/// symlink loop, a dangling symlink, a fifo and an empty directory.
std::string make_tree(const scratch_dir& d) {
  const std::string root = d / "t";
  auto g = fs_test::run({fs_test::bin("gen-tree"), "--breadth", "3", "--depth", "3", "--files", "4", root});
  EXPECT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(::symlink("f0", (root + "/d0/lnk").c_str()), 0);
  EXPECT_EQ(::symlink("..", (root + "/d0/d1/loop").c_str()), 0);
  EXPECT_EQ(::symlink("/nonexistent/x", (root + "/dangling").c_str()), 0);
  EXPECT_EQ(::mkfifo((root + "/d1/fifo").c_str(), 0644), 0);
  EXPECT_EQ(::mkdir((root + "/d2/empty").c_str(), 0755), 0);
  return root;
}

class walk_on : public ::testing::TestWithParam<where> {};

TEST_P(walk_on, visits_every_entry_once_with_its_type_like_recursive_directory_iterator) {
  scratch_dir d;
  const std::string root = make_tree(d);
  const auto want = walk_oracle(root);
  ASSERT_GT(want.size(), 100u);
  seen s;
  auto r = run_on(GetParam(), fs::walk(root, {}, s.visitor()));
  ASSERT_TRUE(r) << r.err().message();
  EXPECT_EQ(s.duplicates.load(), 0);
  EXPECT_EQ(s.entries, want);
  const auto [files, dirs] = counts_of(want);
  EXPECT_EQ(r->files, files);
  EXPECT_EQ(r->dirs, dirs);
  EXPECT_EQ(r->errors, 0u);
  EXPECT_FALSE(r->stopped);
  // Without a visitor (the counting loop), the same counts.
  auto plain = run_on(GetParam(), fs::walk(root));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->files, files);
  EXPECT_EQ(plain->dirs, dirs);
}

TEST_P(walk_on, full_reads_and_one_job_give_the_same_entries) {
  scratch_dir d;
  const std::string root = make_tree(d);
  const auto want = walk_oracle(root);
  for (unsigned par : {1u, 3u}) {
    seen s;
    fs::walk_options o;
    o.full_reads = true;
    o.max_parallel = par;
    auto r = run_on(GetParam(), fs::walk(root, o, s.visitor()));
    ASSERT_TRUE(r);
    EXPECT_EQ(s.entries, want) << "max_parallel " << par;
  }
}

TEST_P(walk_on, skip_prunes_a_directory_but_visits_and_counts_it) {
  scratch_dir d;
  const std::string root = make_tree(d);
  seen s;
  auto r = run_on(GetParam(), fs::walk(root, {}, s.visitor([](const fs::walk_entry& e) {
    return e.name == "d1" ? fs::walk_action::skip : fs::walk_action::proceed;
  })));
  ASSERT_TRUE(r);
  auto want = walk_oracle(root);
  std::erase_if(want, [](const auto& kv) {
    const std::string& p = kv.first;
    // Below any directory named d1 (the directory itself stays).
    return p.find("/d1/") != std::string::npos;
  });
  EXPECT_EQ(s.entries, want);
  const auto [files, dirs] = counts_of(want);
  EXPECT_EQ(r->files, files);
  EXPECT_EQ(r->dirs, dirs);
}

TEST_P(walk_on, max_depth_limits_what_is_visited_and_counted) {
  scratch_dir d;
  const std::string root = make_tree(d);
  for (unsigned depth : {0u, 1u, 2u, 3u}) {
    seen s;
    fs::walk_options o;
    o.max_depth = depth;
    auto r = run_on(GetParam(), fs::walk(root, o, s.visitor()));
    ASSERT_TRUE(r);
    const auto want = walk_oracle(root, depth);
    EXPECT_EQ(s.entries, want) << "max_depth " << depth;
    const auto [files, dirs] = counts_of(want);
    EXPECT_EQ(r->files, files) << "max_depth " << depth;
    EXPECT_EQ(r->dirs, dirs) << "max_depth " << depth;
    // And without a visitor.
    auto plain = run_on(GetParam(), fs::walk(root, o));
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->files, files) << "max_depth " << depth << ", no visitor";
    EXPECT_EQ(plain->dirs, dirs) << "max_depth " << depth << ", no visitor";
  }
}

TEST_P(walk_on, symlink_loop_is_one_symlink_entry_and_not_followed) {
  scratch_dir d;
  ASSERT_EQ(::mkdir((d / "a").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((d / "a/b").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("../..", (d / "a/b/up").c_str()), 0);
  ASSERT_EQ(::symlink("self", (d / "a/self").c_str()), 0);
  seen s;
  auto r = run_on(GetParam(), fs::walk(d.path(), {}, s.visitor()));
  ASSERT_TRUE(r);
  const std::map<std::string, std::pair<fs::entry_type, unsigned>> want{
      {d.path(), {fs::entry_type::directory, 0}},
      {d / "a", {fs::entry_type::directory, 1}},
      {d / "a/b", {fs::entry_type::directory, 2}},
      {d / "a/b/up", {fs::entry_type::symlink, 3}},
      {d / "a/self", {fs::entry_type::symlink, 2}},
  };
  EXPECT_EQ(s.entries, want);
  EXPECT_EQ(r->files, 2u);
  EXPECT_EQ(r->dirs, 3u);
  EXPECT_EQ(r->errors, 0u);
}

TEST_P(walk_on, visitor_stop_ends_the_walk_early_without_an_error) {
  scratch_dir d;
  const std::string root = make_tree(d);
  std::atomic<int> calls{0};
  auto r = run_on(GetParam(), fs::walk(root, {}, [&](const fs::walk_entry&) {
    return calls.fetch_add(1) == 5 ? fs::walk_action::stop : fs::walk_action::proceed;
  }));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->stopped);
  EXPECT_LT(static_cast<std::size_t>(calls.load()), walk_oracle(root).size() / 2);
}

TEST_P(walk_on, stop_token_ends_the_walk_early_with_operation_canceled) {
  scratch_dir d;
  const std::string root = d / "t";
  // Wide enough that one directory per job under way is a small part of it.
  auto g = fs_test::run({fs_test::bin("gen-tree"), "--breadth", "6", "--depth", "4", "--files", "1", root});
  ASSERT_EQ(g.status, 0) << g.err;
  const std::size_t total = walk_oracle(root).size();
  std::atomic<std::size_t> calls{0};
  std::optional<fs::fs_result<fs::walk_stats>> out;
  // lifetime: the coroutine lambdas live here, past the walk (a lambda's captures live
  // in the lambda object, not in the coroutine frame).
  auto child = [&](saturn::task_group& grp) -> saturn::task<void> {
    fs::walk_visitor v = [&](const fs::walk_entry&) {
      if (calls.fetch_add(1) == 20)
        grp.cancel();  // any thread
      return fs::walk_action::proceed;
    };
    fs::walk_options o;
    auto r = co_await fs::walk(root, o, v);
    out.emplace(std::move(r));
  };
  auto group_body = [&](saturn::task_group& grp) -> saturn::task<void> {
    grp.spawn(child(grp));
    co_return;
  };
  auto body = [&]() -> saturn::task<void> { co_await saturn::task_group::run(group_body); };
  run_on(GetParam(), body());
  ASSERT_TRUE(out.has_value());
  ASSERT_FALSE(*out);
  EXPECT_EQ(out->err().code, std::errc::operation_canceled);
  EXPECT_EQ(out->err().path, root);
  EXPECT_LT(calls.load(), total / 2) << "of " << total;
}

TEST_P(walk_on, root_that_is_missing_is_an_error_and_a_file_is_one_entry) {
  scratch_dir d;
  auto missing = run_on(GetParam(), fs::walk(d / "nope"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.err().code, std::errc::no_such_file_or_directory);
  EXPECT_EQ(missing.err().message().rfind("lstat " + (d / "nope") + ":", 0), 0u) << missing.err().message();
  touch(d / "f");
  seen s;
  auto file = run_on(GetParam(), fs::walk(d / "f", {}, s.visitor()));
  ASSERT_TRUE(file);
  EXPECT_EQ(file->files, 1u);
  EXPECT_EQ(file->dirs, 0u);
  const std::map<std::string, std::pair<fs::entry_type, unsigned>> want{{d / "f", {fs::entry_type::regular, 0}}};
  EXPECT_EQ(s.entries, want);
}

INSTANTIATE_TEST_SUITE_P(fs_walk, walk_on, ::testing::Values(where::runtime, where::pool),
                         [](const auto& p) { return p.param == where::runtime ? "runtime" : "thread_pool"; });

/// Runs `fn` (returns an exit status) in a child process that first drops to uid/gid
/// 65534 when running as root, so that permission bits apply. -1 if it could not run.
template <class F>
int in_unprivileged_child(F fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(126);
    ::_exit(fn());
  }
  int st = 0;
  if (pid < 0 || ::waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
    return -1;
  return WEXITSTATUS(st);
}

// Permissions do not stop root, so the walk runs in a child process that drops to uid
// 65534 (nobody) first; the child reports each check's failure as a distinct exit code.
TEST(fs_walk, unreadable_directory_is_reported_by_path_and_errno_and_the_rest_walked) {
  scratch_dir d;
  const std::string root = make_tree(d);
  const auto before = walk_oracle(root);
  ASSERT_EQ(::chmod((root + "/d1/d2").c_str(), 0), 0);
  for (where w : {where::runtime, where::pool}) {
    const int status = in_unprivileged_child([&]() -> int {
      // The entries the walk must still see: all but those below d1/d2.
      auto want = before;
      std::erase_if(want, [&](const auto& kv) { return kv.first.rfind(root + "/d1/d2/", 0) == 0; });
      seen s;
      auto r = run_on(w, fs::walk(root, {}, s.visitor()));  // errors to error_list
      if (!r)
        return 10;
      if (r->errors != 1 || r->error_list.size() != 1)
        return 11;
      if (r->error_list[0].path != root + "/d1/d2" || r->error_list[0].code != EACCES)
        return 12;
      if (r->error_list[0].message() != "cannot read " + root + "/d1/d2: Permission denied")
        return 13;
      if (s.entries != want)
        return 14;
      const auto [files, dirs] = counts_of(want);
      if (r->files != files || r->dirs != dirs)
        return 15;
      // With a callback instead: called once, and the list stays empty.
      std::atomic<int> calls{0};
      fs::walk_options o;
      o.on_error = [&](const fs::walk_error& e) {
        if (e.path == root + "/d1/d2" && e.code == EACCES)
          ++calls;
      };
      auto r2 = run_on(w, fs::walk(root, o));
      if (!r2 || r2->errors != 1 || !r2->error_list.empty() || calls.load() != 1)
        return 16;
      return 0;
    });
    if (status == 126)
      GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
    EXPECT_EQ(status, 0) << (w == where::runtime ? "runtime" : "thread_pool")
                         << ": 10 walk failed, 11 error count, 12 error path/errno, 13 message, 14 entries, "
                            "15 counts, 16 on_error";
  }
}

}  // namespace
