// saturn-walk [--threads N] ROOT
//
// Counts what lies below ROOT without following symlinks (BENCH-CONTRACT.md, `walk`):
//     <N> file(s)
//     <M> directories(s)
// M counts ROOT and every directory below it; N every other entry (a symlink is a file).
// ROOT is taken as find takes it: a ROOT that is not a directory, or is a symlink (unless
// given with a trailing slash, "link/"), is 1 file and 0 directories.
// Like find, a directory that cannot be read is reported on stderr with its path (each
// one), counted, its contents skipped, and the walk goes on; the exit status is then 1.
// A directory that vanishes between being listed and being opened is counted (it was
// listed) and skipped without a word. Bad usage exits 2. The walk runs on saturn's thread_pool in cpu_bound mode (walker.hpp).
// SATURN_WALK_FULL_READS=1 turns off the end-of-directory shortcut (every directory is
// read until getdents64 returns 0), for checking that the shortcut changes no count.
#include "escape.hpp"
#include "walker.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace {

[[noreturn]] void usage(int status) {
  std::fprintf(status == 0 ? stdout : stderr,
               "usage: saturn-walk [--threads N] ROOT\n"
               "  --threads N  workers: 0 (the default) = one per CPU, or 1..%u\n",
               walk::k_max_threads);
  std::exit(status);
}

unsigned parse_threads(const char* s) {
  // Digits only (strtoul alone would take " 7", "+7" and wrap "-1" around).
  unsigned long v = 0;
  bool ok = s[0] != '\0';
  for (const char* p = s; ok && *p != '\0'; ++p) {
    ok = *p >= '0' && *p <= '9';
    v = v * 10 + static_cast<unsigned long>(*p - '0');
    ok = ok && v <= walk::k_max_threads;
  }
  if (!ok) {
    std::fprintf(stderr, "saturn-walk: --threads takes 0 (one per CPU) or a number of workers in 1..%u, got '%s'\n",
                 walk::k_max_threads, walk::escape_name(s).c_str());
    std::exit(2);
  }
  return static_cast<unsigned>(v);
}

}  // namespace

int main(int argc, char** argv) {
  walk::walk_options opts;
  const char* root = nullptr;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--threads") == 0) {
      if (i + 1 >= argc)
        usage(2);
      opts.threads = parse_threads(argv[++i]);
    } else if (std::strncmp(a, "--threads=", 10) == 0) {
      opts.threads = parse_threads(a + 10);
    } else if (std::strcmp(a, "-h") == 0 || std::strcmp(a, "--help") == 0) {
      usage(0);
    } else if (std::strcmp(a, "--") == 0 && i + 2 == argc && root == nullptr) {
      root = argv[++i];
    } else if (root == nullptr && (a[0] != '-' || a[1] == '\0')) {
      root = a;
    } else {
      usage(2);
    }
  }
  if (root == nullptr)
    usage(2);
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
  opts.leave_pool_running = false;  // sanitizer builds check the pool's full shutdown too
#else
  opts.leave_pool_running = true;   // the process ends right below: skip joining workers
#endif
  opts.on_error = [](const std::string& message) { std::fprintf(stderr, "saturn-walk: %s\n", message.c_str()); };
  walk::walk_result r;
  try {
    r = walk::run_walk(root, opts);
  } catch (const std::exception& e) {  // starting the workers failed (threads, memory)
    std::fprintf(stderr, "saturn-walk: cannot start the walk: %s\n", e.what());
    return 1;
  }
  int status = r.errors == 0 ? 0 : 1;
  if (r.counted)
    std::printf("%llu file(s)\n%llu directories(s)\n", static_cast<unsigned long long>(r.files),
                static_cast<unsigned long long>(r.dirs));
  if (std::fflush(stdout) != 0 && status == 0) {
    std::perror("saturn-walk: cannot write the counts");
    status = 1;
  }
  if (opts.leave_pool_running)
    std::_Exit(status);  // the pool's workers are still there: no static destructors now
  return status;
}
