// saturn-walk and gen-tree as programs: counts against the generator's and against
// find(1), symlink loops, unreadable directories, odd names, deep chains (also under a
// small descriptor limit), bad ROOTs.
#include <gtest/gtest.h>

#include "fs/fs_test_support.hpp"

#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <sstream>
#include <vector>

using fs_test::bin;
using fs_test::counts;
using fs_test::find_counts;
using fs_test::run;
using fs_test::scratch_dir;
using fs_test::touch;

namespace {

const std::string k_walk = bin("saturn-walk");
const std::string k_gen = bin("gen-tree");

unsigned long long tree_dirs(unsigned long long b, unsigned long long d) {
  unsigned long long dirs = 0, level = 1;
  for (unsigned long long i = 0; i <= d; ++i, level *= b)
    dirs += level;
  return dirs;
}

/// Walks `root` with several thread counts and both end-of-directory strategies; all
/// must print `want`.
void expect_walk(const std::string& root, const std::string& want) {
  for (const char* threads : {"1", "2", "4"}) {
    auto r = run({k_walk, "--threads", threads, root});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, want) << "threads " << threads;
  }
  auto full = run({k_walk, root}, -1, {"SATURN_WALK_FULL_READS=1"});
  EXPECT_EQ(full.status, 0) << full.err;
  EXPECT_EQ(full.out, want) << "with SATURN_WALK_FULL_READS=1";
}

/// find's counts when ROOT itself may be a file or a symlink: `find ROOT ! -type d` and
/// `find ROOT -type d` (find_counts assumes ROOT is a directory).
std::string find_root_counts(const std::string& root) {
  const std::string cmd = "find '" + root + "' -printf '%y'";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr)
    return "popen failed";
  unsigned long long files = 0, dirs = 0;
  for (int c; (c = std::fgetc(f)) != EOF;)
    (c == 'd' ? dirs : files)++;
  if (::pclose(f) != 0)
    return "find failed";
  return counts(files, dirs);
}

void mkdir_p(const std::string& p) { ASSERT_EQ(::mkdir(p.c_str(), 0755), 0) << p; }

}  // namespace

TEST(walk_app, generated_trees_match_generator_and_find) {
  std::mt19937 rng(2026);
  for (int i = 0; i < 6; ++i) {
    scratch_dir d;
    const unsigned b = rng() % 5, depth = rng() % 4, files = rng() % 6;
    const std::string root = d / "t";
    auto g = run({k_gen, "--breadth", std::to_string(b), "--depth", std::to_string(depth), "--files",
                  std::to_string(files), root});
    ASSERT_EQ(g.status, 0) << g.err;
    const unsigned long long dirs = tree_dirs(b, depth);
    EXPECT_EQ(g.out, counts(dirs * files, dirs)) << b << "x" << depth << " (" << files << ")";
    EXPECT_EQ(find_counts(root), g.out);
    auto e = run({k_gen, "--breadth", std::to_string(b), "--depth", std::to_string(depth), "--files",
                  std::to_string(files), "--expect"});
    EXPECT_EQ(e.out, g.out);
    expect_walk(root, g.out);
  }
}

TEST(walk_app, gen_tree_shapes_and_usage) {
  const std::pair<const char*, std::string> shapes[] = {
      {"wide", counts(101010, 10101)},
      {"deep", counts(88572, 29524)},
      {"balanced", counts(93310, 9331)},
      {"dense", counts(222200, 1111)},
  };
  for (const auto& [shape, want] : shapes) {
    auto r = run({k_gen, "--shape", shape, "--expect"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, want) << shape;
  }
  EXPECT_EQ(run({k_gen, "--shape", "wide", "--breadth", "2", "--expect"}).status, 2);
  EXPECT_EQ(run({k_gen, "--shape", "nope", "--expect"}).status, 2);
  EXPECT_EQ(run({k_gen, "--breadth", "2", "--expect"}).status, 2);
  EXPECT_EQ(run({k_gen, "--breadth", "-1", "--depth", "1", "--files", "1", "--expect"}).status, 2);
  EXPECT_EQ(run({k_gen, "--breadth", "2", "--depth", "1", "--files", "1"}).status, 2);  // no ROOT
  scratch_dir d;
  auto first = run({k_gen, "--breadth", "2", "--depth", "1", "--files", "1", d / "t"});
  ASSERT_EQ(first.status, 0);
  auto again = run({k_gen, "--breadth", "2", "--depth", "1", "--files", "1", d / "t"});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("exists"), std::string::npos);
  auto forced = run({k_gen, "--breadth", "3", "--depth", "1", "--files", "2", "--force", d / "t"});
  EXPECT_EQ(forced.status, 0);
  EXPECT_EQ(find_counts(d / "t"), forced.out);
}

TEST(walk_app, empty_directory) {
  scratch_dir d;
  expect_walk(d.path(), counts(0, 1));
}

TEST(walk_app, symlinks_are_files_and_loops_are_not_followed) {
  scratch_dir d;
  mkdir_p(d / "a");
  mkdir_p(d / "a/b");
  touch(d / "a/b/f");
  ::symlink("..", (d / "a/b/up").c_str());
  ::symlink(".", (d / "a/self").c_str());
  ::symlink(d.path().c_str(), (d / "a/b/root").c_str());
  ::symlink("loop2", (d / "loop1").c_str());
  ::symlink("loop1", (d / "loop2").c_str());
  ::symlink("missing", (d / "dangling").c_str());
  const std::string want = counts(7, 3);  // f, up, self, root, loop1, loop2, dangling
  EXPECT_EQ(find_counts(d.path()), want);
  expect_walk(d.path(), want);
}

TEST(walk_app, odd_names) {
  scratch_dir d;
  for (const std::string n : {"new\nline", "\xff\xfe", "a b", "-x", "\n", "back\\slash"}) {
    mkdir_p(d / n);
    touch(d / n + "/" + n);
    touch(d / n + "/f\nile");
  }
  touch(d / std::string(255, 'z'));
  const std::string want = counts(13, 7);
  EXPECT_EQ(find_counts(d.path()), want);
  expect_walk(d.path(), want);
}

TEST(walk_app, deep_chain_beyond_the_descriptor_window) {
  scratch_dir d;
  std::string p = d.path();
  for (int i = 0; i < 300; ++i) {
    p += "/d";
    mkdir_p(p);
    touch(p + "/f");
  }
  expect_walk(d.path(), counts(300, 301));
}

namespace {
/// Makes a chain of `depth` directories "d" below `root`, each with a file "f", by
/// descriptor: the paths get longer than PATH_MAX.
void make_chain(const std::string& root, int depth) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << root;
  for (int i = 0; i < depth; ++i) {
    ASSERT_EQ(::mkdirat(fd, "d", 0755), 0) << "level " << i;
    const int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(fd);
    ASSERT_GE(next, 0) << "level " << i;
    fd = next;
    const int f = ::openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(f, 0) << "level " << i;
    ::close(f);
  }
  ::close(fd);
}

/// The directory `depth` levels down make_chain's chain below `root`, opened by descriptor
/// (its path is too long to open), or -1.
int open_chain_bottom(const std::string& root, int depth) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (int i = 0; i < depth && fd >= 0; ++i) {
    const int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(fd);
    fd = next;
  }
  return fd;
}

/// Removes what make_chain made without a long path (scratch_dir's nftw cannot): d/d
/// moves up to take d's place, level by level.
struct chain_remover {
  std::string root;
  ~chain_remover() {
    const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (;;) {
      ::unlinkat(fd, "d/f", 0);
      const bool deeper = ::renameat(fd, "d/d", fd, "next") == 0;
      if (::unlinkat(fd, "d", AT_REMOVEDIR) != 0 || !deeper || ::renameat(fd, "next", fd, "d") != 0)
        break;
    }
    ::close(fd);
  }
};
}  // namespace

TEST(walk_app, deep_chain_under_a_small_descriptor_limit) {
  // 3000 levels with RLIMIT_NOFILE 32, soft and hard (find needs ~10). Each job used to
  // keep up to 128 ancestors open: "Too many open files".
  scratch_dir d;
  const std::string root = d / "c";
  mkdir_p(root);
  const chain_remover guard{root};
  make_chain(root, 3000);
  const std::string want = counts(3000, 3001);
  EXPECT_EQ(find_counts(root), want);
  for (const char* threads : {"1", "2", "4", "0"}) {
    auto r = run({k_walk, "--threads", threads, root}, -1, {}, 32);
    EXPECT_EQ(r.status, 0) << "threads " << threads << ": " << r.err.substr(0, 300);
    EXPECT_EQ(r.out, want) << "threads " << threads;
  }
  auto full = run({k_walk, root}, -1, {"SATURN_WALK_FULL_READS=1"}, 32);
  EXPECT_EQ(full.status, 0) << full.err.substr(0, 300);
  EXPECT_EQ(full.out, want) << "with SATURN_WALK_FULL_READS=1";
}

TEST(walk_app, many_deep_chains_on_many_threads_under_a_small_descriptor_limit) {
  // 16 workers x 128 levels each used to exceed the limit; queued jobs held theirs too.
  scratch_dir d;
  for (int c = 0; c < 24; ++c) {
    std::string p = d / "c";
    p += std::to_string(c);
    mkdir_p(p);
    for (int i = 0; i < 150; ++i) {
      p += "/d";
      mkdir_p(p);
    }
    touch(p + "/leaf");
  }
  const std::string want = counts(24, 1 + 24 * 151);
  EXPECT_EQ(find_counts(d.path()), want);
  for (const char* threads : {"16", "255"}) {
    for (const long limit : {48L, 16L}) {
      auto r = run({k_walk, "--threads", threads, d.path()}, -1, {}, limit);
      EXPECT_EQ(r.status, 0) << threads << " threads, limit " << limit << ": " << r.err.substr(0, 300);
      EXPECT_EQ(r.out, want) << threads << " threads, limit " << limit;
    }
  }
}

TEST(walk_app, branching_tree_under_a_small_descriptor_limit_reopens_closed_levels) {
  // A binary tree 9 deep: with ~3 levels open per worker and few descriptors left to
  // share with spawned jobs, the walk closes ancestors to go down, then reopens them by
  // name to walk their other subdirectory.
  scratch_dir d;
  const std::string root = d / "t";
  auto g = run({k_gen, "--breadth", "2", "--depth", "9", "--files", "1", root});
  ASSERT_EQ(g.status, 0) << g.err;
  const std::string want = counts(1023, 1023);
  ASSERT_EQ(g.out, want);
  EXPECT_EQ(find_counts(root), want);
  for (const char* threads : {"1", "4"}) {
    for (const long limit : {16L, 24L}) {
      auto r = run({k_walk, "--threads", threads, root}, -1, {}, limit);
      EXPECT_EQ(r.status, 0) << threads << " threads, limit " << limit << ": " << r.err.substr(0, 300);
      EXPECT_EQ(r.out, want) << threads << " threads, limit " << limit;
    }
  }
}

TEST(walk_app, directory_larger_than_one_batch) {
  scratch_dir d;
  // 1200 subdirectories with 50-byte names: 96 KB of dirents, more than one 64 KiB batch.
  for (int i = 0; i < 1200; ++i) {
    std::string sub = d / std::string(46, 's');
    sub += std::to_string(1000 + i);
    mkdir_p(sub);
    if (i % 10 == 0)
      touch(sub + "/f");
  }
  const std::string want = counts(120, 1201);
  EXPECT_EQ(find_counts(d.path()), want);
  expect_walk(d.path(), want);
}

TEST(walk_app, root_that_is_not_a_directory_counts_as_one_file_like_find) {
  scratch_dir d;
  touch(d / "plain");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0644), 0);  // opening it would block: never opened
  ASSERT_EQ(::symlink("missing", (d / "dangling").c_str()), 0);
  for (const std::string& root : {d / "plain", d / "fifo", d / "dangling", std::string("/dev/null")}) {
    auto r = run({k_walk, root});
    EXPECT_EQ(r.status, 0) << root << ": " << r.err;
    EXPECT_EQ(r.out, counts(1, 0)) << root;
    EXPECT_EQ(r.out, find_root_counts(root)) << root;
  }
  auto m = run({k_walk, d / "missing"});
  EXPECT_EQ(m.status, 1);
  EXPECT_EQ(m.out, "");
  EXPECT_NE(m.err.find(d / "missing"), std::string::npos) << m.err;
  auto slash = run({k_walk, d / "plain/"});  // "Not a directory", as for find
  EXPECT_EQ(slash.status, 1);
  EXPECT_EQ(slash.out, "");
  EXPECT_NE(slash.err.find(d / "plain/: Not a directory"), std::string::npos) << slash.err;
  EXPECT_EQ(run({k_walk}).status, 2);
  EXPECT_EQ(run({k_walk, "--threads", "x", d.path()}).status, 2);
  EXPECT_EQ(run({k_walk, d.path(), d.path()}).status, 2);
}

TEST(walk_app, symlink_root_is_a_file_unless_given_with_a_trailing_slash) {
  scratch_dir d;
  mkdir_p(d / "d");
  touch(d / "d/f");
  mkdir_p(d / "d/sub");
  ASSERT_EQ(::symlink("d", (d / "ld").c_str()), 0);
  auto link = run({k_walk, d / "ld"});
  EXPECT_EQ(link.status, 0) << link.err;
  EXPECT_EQ(link.out, counts(1, 0));
  EXPECT_EQ(link.out, find_root_counts(d / "ld"));
  for (const std::string& root : {d / "ld/", d / "ld//"}) {
    auto r = run({k_walk, root});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, counts(1, 2)) << root;
    EXPECT_EQ(r.out, find_root_counts(root)) << root;
  }
}

namespace {
/// Runs saturn-walk so that directory permissions apply: as is when not root, else as
/// the unprivileged uid 65534 (root bypasses them). Returns false if that is impossible.
bool run_unprivileged(const std::vector<std::string>& argv, fs_test::run_result& out) {
  out = run(argv, ::geteuid() == 0 ? 65534 : -1);
  return out.status != 126 && out.status != 127;
}

/// Runs saturn-walk unprivileged (see run_unprivileged) on `root` once per count in
/// `threads`, handing each result to `check(result, threads)`. False, having checked
/// nothing, when it cannot drop to uid 65534.
template <class F>
bool walk_unprivileged_each(const std::string& root, std::initializer_list<const char*> threads, F check) {
  for (const char* t : threads) {
    fs_test::run_result r;
    if (!run_unprivileged({k_walk, "--threads", t, root}, r))
      return false;
    check(r, t);
  }
  return true;
}


/// find's counts as uid 65534 (what an unprivileged walk can see), or "" if impossible:
/// the contract's `find ROOT ! -type d` and `find ROOT -type d` (one character per entry,
/// not a line: names may hold newlines). Not `-printf %y`: find leaves out an entry it
/// cannot lstat (below a directory that is listable but not searchable) from -printf,
/// while `! -type d` takes it in.
std::string find_counts_unprivileged(const std::string& root) {
  fs_test::run_result files, dirs;
  if (!run_unprivileged({"/usr/bin/find", root, "!", "-type", "d", "-printf", "x"}, files) ||
      !run_unprivileged({"/usr/bin/find", root, "-type", "d", "-printf", "x"}, dirs))
    return "";
  return counts(files.out.size(), dirs.out.size());
}

/// The lines of `text` in order.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}
}  // namespace

TEST(walk_app, unreadable_directory_is_reported_counted_and_skipped) {
  scratch_dir d;
  mkdir_p(d / "ok");
  touch(d / "ok/f");
  mkdir_p(d / "ok/locked");
  touch(d / "ok/locked/hidden");
  mkdir_p(d / "ok/locked/below");
  ASSERT_EQ(::chmod((d / "ok/locked").c_str(), 0), 0);
  fs_test::run_result r;
  if (!run_unprivileged({k_walk, d.path()}, r))
    GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out, counts(1, 3));  // f; ROOT, ok, locked (its contents unknown)
  EXPECT_EQ(r.out, find_counts_unprivileged(d.path()));
  EXPECT_EQ(r.err, "saturn-walk: cannot read " + (d / "ok/locked") + ": Permission denied\n");
}

TEST(walk_app, every_unreadable_directory_is_reported_and_the_rest_walked) {
  // Like find: each unreadable directory on stderr once, everything else counted, exit 1.
  scratch_dir d;
  std::vector<std::string> locked;
  for (int i = 0; i < 12; ++i) {
    const std::string top = d / ("t" + std::to_string(i));
    mkdir_p(top);
    for (int j = 0; j < 6; ++j) {
      const std::string sub = top + "/s" + std::to_string(j);
      mkdir_p(sub);
      touch(sub + "/f");
      mkdir_p(sub + "/deeper");
      touch(sub + "/deeper/g");
      if ((i + j) % 5 == 0)
        locked.push_back((i + j) % 2 == 0 ? sub : sub + "/deeper");
    }
  }
  for (const std::string& p : locked)
    ASSERT_EQ(::chmod(p.c_str(), 0), 0);
  const std::string want = find_counts_unprivileged(d.path());
  const bool ran = walk_unprivileged_each(d.path(), {"1", "2", "4"}, [&](const fs_test::run_result& r, const char* threads) {
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, want) << "threads " << threads;
    std::vector<std::string> got = lines(r.err), expected;
    for (const std::string& p : locked)
      expected.push_back("saturn-walk: cannot read " + p + ": Permission denied");
    std::sort(got.begin(), got.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(got, expected) << "threads " << threads;
  });
  if (!ran)
    GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
}

TEST(walk_app, directories_that_vanish_during_the_walk_are_skipped_silently) {
  // A process removes (or replaces with a file or a symlink) the subdirectories in a
  // random order while the walk runs: many are listed, then gone when the walk opens
  // them. find warns and carries on; saturn-walk carries on without a word: each was
  // counted when listed, and what is gone has nothing to count.
  // Enough that the walk is still opening directories while the remover works (on a
  // disk mounted with discard an rmdir takes ~0.6 ms; the walk opens one in ~5 us).
  constexpr int k_dirs = 3000;
  for (const char* threads : {"1", "4"}) {
    scratch_dir d;
    const std::string root = d / "t";
    mkdir_p(root);
    std::vector<std::string> names;
    for (int i = 0; i < k_dirs; ++i) {
      names.push_back(root + "/d" + std::to_string(i));
      mkdir_p(names.back());
    }
    std::shuffle(names.begin(), names.end(), std::mt19937(static_cast<unsigned>(std::strtoul(threads, nullptr, 10))));
    const pid_t remover = ::fork();
    ASSERT_GE(remover, 0);
    if (remover == 0) {
      for (std::size_t i = 0; i < names.size(); ++i) {
        const char* p = names[i].c_str();
        ::rmdir(p);
        if (i % 3 == 1)
          ::close(::open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
        else if (i % 3 == 2)
          ::symlink(".", p);
      }
      ::_exit(0);
    }
    auto r = run({k_walk, "--threads", threads, root});
    ::kill(remover, SIGKILL);  // the walk is over: the rest need not go
    int st = 0;
    ::waitpid(remover, &st, 0);
    EXPECT_EQ(r.status, 0) << "threads " << threads;
    EXPECT_EQ(r.err.substr(0, 300), "") << "threads " << threads;
    unsigned long long files = 0, dirs = 0;
    ASSERT_EQ(std::sscanf(r.out.c_str(), "%llu file(s)\n%llu directories(s)\n", &files, &dirs), 2) << r.out;
    EXPECT_EQ(r.out, counts(files, dirs));
    EXPECT_GE(dirs, 1u);
    EXPECT_LE(files + dirs, k_dirs + 1u);
  }
}

TEST(walk_app, unreadable_root_is_one_directory_and_an_error) {
  scratch_dir d;
  mkdir_p(d / "r");
  touch(d / "r/f");
  ASSERT_EQ(::chmod((d / "r").c_str(), 0), 0);
  fs_test::run_result r;
  if (!run_unprivileged({k_walk, d / "r"}, r))
    GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, counts(0, 1));
  EXPECT_EQ(r.err, "saturn-walk: cannot read " + (d / "r") + ": Permission denied\n");
}

TEST(walk_app, unsearchable_directory_reports_the_child_path) {
  scratch_dir d;
  mkdir_p(d / "noexec");
  mkdir_p(d / "noexec/sub");
  touch(d / "noexec/file");
  mkdir_p(d / "other");
  touch(d / "other/f");
  ASSERT_EQ(::chmod((d / "noexec").c_str(), 0644), 0);  // listable, but cannot open children
  fs_test::run_result r;
  if (!run_unprivileged({k_walk, "--threads", "2", d.path()}, r))
    GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  // file, other/f and noexec/sub, which cannot be looked at (find: `! -type d` holds for
  // it); ROOT, noexec, other.
  EXPECT_EQ(r.out, counts(3, 3));
  EXPECT_EQ(r.out, find_counts_unprivileged(d.path()));
  EXPECT_EQ(r.err, "saturn-walk: cannot read " + (d / "noexec/sub") + ": Permission denied\n");
}

TEST(walk_app, subdirectories_of_an_unsearchable_directory_count_as_files_like_find) {
  // find lists them but cannot lstat them: `-type d` is false, `! -type d` true. Several
  // of them, so that with more threads some are handed to jobs of their own.
  scratch_dir d;
  mkdir_p(d / "noexec");
  for (int i = 0; i < 8; ++i)
    mkdir_p(d / ("noexec/sub" + std::to_string(i)));
  touch(d / "noexec/file");
  ASSERT_EQ(::chmod((d / "noexec").c_str(), 0644), 0);
  const std::string want = find_counts_unprivileged(d.path());
  const bool ran = walk_unprivileged_each(d.path(), {"1", "2", "4"}, [&](const fs_test::run_result& r, const char* threads) {
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, counts(9, 2)) << "threads " << threads;
    EXPECT_EQ(r.out, want) << "threads " << threads;
    EXPECT_EQ(lines(r.err).size(), 8u) << r.err;
  });
  if (!ran)
    GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
}

TEST(walk_app, error_path_longer_than_path_max_is_spelled_in_full) {
  // An unreadable directory 2100 levels down (a path of 4200+ bytes): find names it in
  // full; the message used to say ROOT/.../x, as /proc cannot spell such a path.
  scratch_dir d;
  const std::string root = d / "c";
  mkdir_p(root);
  const chain_remover guard{root};
  constexpr int k_depth = 2100;
  make_chain(root, k_depth);
  std::string want_path = root;
  for (int i = 0; i < k_depth; ++i)
    want_path += "/d";
  want_path += "/x";
  const int fd = open_chain_bottom(root, k_depth);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::mkdirat(fd, "x", 0), 0);
  const bool ran = walk_unprivileged_each(root, {"1", "2"}, [&](const fs_test::run_result& r, const char* threads) {
    EXPECT_EQ(r.status, 1) << "threads " << threads;
    EXPECT_EQ(r.out, counts(k_depth, k_depth + 2)) << "threads " << threads;
    EXPECT_EQ(r.err, "saturn-walk: cannot read " + want_path + ": Permission denied\n") << "threads " << threads;
  });
  if (!ran)
    GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
  EXPECT_EQ(::unlinkat(fd, "x", AT_REMOVEDIR), 0);  // so that chain_remover gets to the top
  ::close(fd);
}

TEST(walk_app, error_paths_below_jobs_spawned_past_path_max_are_spelled_in_full) {
  // The chain of the test above, then a fan of 48 directories each holding an unreadable
  // one: on several threads the fan's directories are walked as jobs on other workers,
  // which know their directory only by descriptor, and /proc cannot spell one that deep.
  // Their messages used to say ROOT/.../sK/x.
  scratch_dir d;
  const std::string root = d / "c";
  mkdir_p(root);
  const chain_remover guard{root};
  constexpr int k_depth = 2100, k_fan = 48;
  make_chain(root, k_depth);
  std::string bottom = root;
  for (int i = 0; i < k_depth; ++i)
    bottom += "/d";
  const int fd = open_chain_bottom(root, k_depth);
  ASSERT_GE(fd, 0);
  std::vector<std::string> expected;
  for (int k = 0; k < k_fan; ++k) {
    const std::string s = "s" + std::to_string(k);
    ASSERT_EQ(::mkdirat(fd, s.c_str(), 0755), 0);
    ASSERT_EQ(::mkdirat(fd, (s + "/x").c_str(), 0), 0);
    expected.push_back("saturn-walk: cannot read " + bottom + "/" + s + "/x: Permission denied");
  }
  std::sort(expected.begin(), expected.end());
  const bool ran = walk_unprivileged_each(root, {"1", "2", "4"}, [&](const fs_test::run_result& r, const char* threads) {
    EXPECT_EQ(r.status, 1) << "threads " << threads;
    EXPECT_EQ(r.out, counts(k_depth, k_depth + 1 + 2 * k_fan)) << "threads " << threads;
    std::vector<std::string> got = lines(r.err);
    std::sort(got.begin(), got.end());
    // (Each path is 4200+ bytes: on a mismatch, say how many and show a tail.)
    EXPECT_EQ(got.size(), expected.size()) << "threads " << threads;
    std::size_t wrong = 0;
    std::string first_wrong;
    for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
      if (got[i] != expected[i] && wrong++ == 0)
        first_wrong = got[i].substr(got[i].size() > 160 ? got[i].size() - 160 : 0);
    }
    EXPECT_EQ(wrong, 0u) << "threads " << threads << ": the first wrong message ends in ..." << first_wrong;
  });
  if (!ran)
    GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
  for (int k = 0; k < k_fan; ++k) {  // so that chain_remover gets to the top
    const std::string s = "s" + std::to_string(k);
    EXPECT_EQ(::unlinkat(fd, (s + "/x").c_str(), AT_REMOVEDIR), 0);
    EXPECT_EQ(::unlinkat(fd, s.c_str(), AT_REMOVEDIR), 0);
  }
  ::close(fd);
}

TEST(walk_app, error_path_is_spelled_from_root_as_given) {
  scratch_dir d;
  mkdir_p(d / "x");
  mkdir_p(d / "x/locked");
  ASSERT_EQ(::chmod((d / "x/locked").c_str(), 0), 0);
  fs_test::run_result r;
  // A ROOT with a redundant component: the message starts from it, not from /proc's spelling.
  if (!run_unprivileged({k_walk, d.path() + "/./x"}, r))
    GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(d.path() + "/./x/locked"), std::string::npos) << r.err;
}

TEST(walk_app, error_paths_join_a_trailing_slash_like_find) {
  scratch_dir d;
  mkdir_p(d / "x");
  mkdir_p(d / "x/locked");
  mkdir_p(d / "y");
  mkdir_p(d / "y/sub");
  mkdir_p(d / "y/sub/locked");
  ASSERT_EQ(::chmod((d / "x/locked").c_str(), 0), 0);
  ASSERT_EQ(::chmod((d / "y/sub/locked").c_str(), 0), 0);
  // find keeps ROOT as given and adds no slash after one it ends with: x/ gives x/locked,
  // x// gives x//locked, never x//locked for x/.
  const std::pair<std::string, std::string> cases[] = {
      {d / "x/", d / "x/locked"},
      {d / "x//", d / "x//locked"},
      {d / "y/", d / "y/sub/locked"},
      {d / "y//", d / "y//sub/locked"},
  };
  for (const auto& [root, path] : cases) {
    fs_test::run_result r;
    if (!run_unprivileged({k_walk, root}, r))
      GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
    EXPECT_EQ(r.status, 1) << root;
    EXPECT_NE(r.err.find("cannot read " + path + ": Permission denied\n"), std::string::npos)
        << "ROOT " << root << ": " << r.err;
  }
}

TEST(walk_app, error_messages_escape_control_characters_and_invalid_utf8) {
  const std::pair<std::string, std::string> names[] = {
      {"new\nline", "new\\nline"},
      {"tab\tcr\r", "tab\\tcr\\r"},
      {"\xff\xfe", "\\377\\376"},
      {"c\x01\x7f\\", "c\\001\\177\\\\"},
      {"\xc0\xaf", "\\300\\257"},          // overlong '/'
      {"\xed\xa0\x80", "\\355\\240\\200"},  // a surrogate
      {"\xc2\x85", "\\302\\205"},          // C1 control NEL: valid UTF-8, still a control
      {"\xe2\x82", "\\342\\202"},          // cut short
      {"\xc3\xbcn\xc3\xaf \xe2\x82\xac \xf0\x9f\x98\x80", "\xc3\xbcn\xc3\xaf \xe2\x82\xac \xf0\x9f\x98\x80"},  // valid: as is
  };
  for (const auto& [name, shown] : names) {
    scratch_dir d;
    mkdir_p(d / name);
    ASSERT_EQ(::chmod((d / name).c_str(), 0), 0);
    fs_test::run_result r;
    if (!run_unprivileged({k_walk, d.path()}, r))
      GTEST_SKIP() << "cannot drop to uid 65534 to make permissions apply";
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "saturn-walk: cannot read " + d.path() + "/" + shown + ": Permission denied\n");
  }
}

TEST(walk_app, crosses_mount_points) {
  scratch_dir d;
  mkdir_p(d / "m");
  if (::mount("tmpfs", (d / "m").c_str(), "tmpfs", 0, "size=1m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << "): needs CAP_SYS_ADMIN";
  // lifetime: unmount before scratch_dir deletes the tree.
  struct unmount {
    std::string p;
    ~unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } guard{d / "m"};
  for (int i = 0; i < 40; ++i) {
    std::string n = "x";
    n += std::to_string(i);
    mkdir_p(d / "m" + "/" + n);
    touch(d / "m" + "/" + n + "/f");
  }
  touch(d / "outside");
  const std::string want = counts(41, 42);
  EXPECT_EQ(find_counts(d.path()), want);
  expect_walk(d.path(), want);
}
