// Shared helpers of the fs tests: a scratch directory, running a program and reading
// its output, the paths of the apps under test, and seeded random bytes.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <ftw.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef SATURN_BIN_DIR
#error "tests/CMakeLists.txt defines SATURN_BIN_DIR (build/<preset>/bin)"
#endif

namespace fs_test {

/// `n` bytes from mt19937_64 seeded with `seed`: the same bytes for the same seed.
inline std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v)
    b = static_cast<std::byte>(rng());
  return v;
}

inline std::string bin(const char* name) { return std::string(SATURN_BIN_DIR) + "/" + name; }

/// A fresh directory under /tmp (mode 0755), deleted with everything in it.
class scratch_dir {
 public:
  scratch_dir() {
    char tmpl[] = "/tmp/saturn-fs-test-XXXXXX";
    const char* p = ::mkdtemp(tmpl);
    if (p == nullptr)
      throw std::runtime_error("mkdtemp failed");
    m_path = p;
    ::chmod(p, 0755);
  }
  ~scratch_dir() { remove_tree(m_path); }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::string& path() const { return m_path; }
  std::string operator/(const std::string& name) const { return m_path + "/" + name; }

  static void remove_tree(const std::string& root) {
    // Make every directory writable and searchable again first (tests chmod some to 0).
    ::nftw(root.c_str(), [](const char* p, const struct stat* sb, int type, struct FTW*) {
      if (type == FTW_D || type == FTW_DNR)
        ::chmod(p, (sb->st_mode & 07777) | 0700);
      return 0;
    }, 64, FTW_PHYS);
    ::nftw(root.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 64,
           FTW_DEPTH | FTW_PHYS);
  }

 private:
  std::string m_path;
};

inline void touch(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ::close(fd);
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct run_result {
  int status = -1;  ///< exit status, or -1 if killed / not run
  std::string out;
  std::string err;
};

/// Runs argv (no shell) with stdout/stderr captured; `as_uid` >= 0 drops to that uid/gid
/// in the child first. `env` entries ("K=V") are added to the environment. `nofile` >= 0
/// sets RLIMIT_NOFILE (soft and hard) in the child.
inline run_result run(const std::vector<std::string>& argv, int as_uid = -1, const std::vector<std::string>& env = {},
                      long nofile = -1) {
  scratch_dir io;
  const std::string out_path = io / "out", err_path = io / "err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    ::dup2(o, 1);
    ::dup2(e, 2);
    for (const std::string& kv : env)
      ::putenv(const_cast<char*>(kv.c_str()));
    if (nofile >= 0) {
      const struct rlimit rl{static_cast<rlim_t>(nofile), static_cast<rlim_t>(nofile)};
      if (::setrlimit(RLIMIT_NOFILE, &rl) != 0)
        ::_exit(126);
    }
    if (as_uid >= 0 && (::setgid(static_cast<gid_t>(as_uid)) != 0 || ::setuid(static_cast<uid_t>(as_uid)) != 0))
      ::_exit(126);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  run_result r;
  int st = 0;
  if (pid > 0 && ::waitpid(pid, &st, 0) == pid && WIFEXITED(st))
    r.status = WEXITSTATUS(st);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

/// "<N> file(s)\n<M> directories(s)\n".
inline std::string counts(unsigned long long files, unsigned long long dirs) {
  return std::to_string(files) + " file(s)\n" + std::to_string(dirs) + " directories(s)\n";
}

/// The oracle: find ROOT -mindepth 1, split into directories and the rest (+1 for ROOT).
inline std::string find_counts(const std::string& root) {
  const std::string cmd = "find '" + root + "' -mindepth 1 -printf '%y'";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr)
    return "popen failed";
  unsigned long long files = 0, dirs = 1;
  for (int c; (c = std::fgetc(f)) != EOF;)
    (c == 'd' ? dirs : files)++;
  if (::pclose(f) != 0)
    return "find failed";
  return counts(files, dirs);
}

}  // namespace fs_test
