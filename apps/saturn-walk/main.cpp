// saturn-walk [--threads N] ROOT
//
// Counts what lies below ROOT without following symlinks (docs/workloads.md, "walk"):
//     <N> file(s)
//     <M> directories(s)
// M counts ROOT and every directory below it; N every other entry (a symlink is a file).
// ROOT is taken as find takes it: a ROOT that is not a directory, or is a symlink (unless
// given with a trailing slash, "link/"), is 1 file and 0 directories.
// Like find, a directory that cannot be read is reported on stderr with its path (each
// one), counted, its contents skipped, and the walk goes on; the exit status is then 1.
// A directory that vanishes between being listed and being opened is counted (it was
// listed) and skipped without a word. Bad usage exits 2. The walk is saturn::fs::walk
// (saturn/fs/walk.hpp) without a visitor, on a thread_pool in cpu_bound mode.
// SATURN_WALK_FULL_READS=1 turns off the end-of-directory shortcut (every directory is
// read until getdents64 returns 0), for checking that the shortcut changes no count.
#include "escape.hpp"
#include "nofile.hpp"

#include <saturn/fs/walk.hpp>
#include <saturn/sched/thread_pool.hpp>

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

namespace {

/// The most workers a walk runs (saturn's thread_pool takes at most 255).
constexpr unsigned k_max_threads = 255;
// An idle worker searches this long before it parks (the pool's default is 50 us): a
// futex wake costs 20-50 us here, and a walker's idle gaps are short.
constexpr unsigned k_spin_before_park_us = 200;

[[noreturn]] void usage(int status) {
  std::fprintf(status == 0 ? stdout : stderr,
               "usage: saturn-walk [--threads N] ROOT\n"
               "  --threads N  workers: 0 (the default) = one per CPU, or 1..%u\n",
               k_max_threads);
  std::exit(status);
}

unsigned parse_threads(const char* s) {
  // Digits only (strtoul alone would take " 7", "+7" and wrap "-1" around).
  unsigned long v = 0;
  bool ok = s[0] != '\0';
  for (const char* p = s; ok && *p != '\0'; ++p) {
    ok = *p >= '0' && *p <= '9';
    v = v * 10 + static_cast<unsigned long>(*p - '0');
    ok = ok && v <= k_max_threads;
  }
  if (!ok) {
    std::fprintf(stderr, "saturn-walk: --threads takes 0 (one per CPU) or a number of workers in 1..%u, got '%s'\n",
                 k_max_threads, walk::escape_name(s).c_str());
    std::exit(2);
  }
  return static_cast<unsigned>(v);
}

/// The pool's size: `requested`, or for 0 the CPUs this process may run on, capped at
/// the pool's 255 workers (a bigger machine still gets a working walk).
unsigned worker_count(unsigned requested) noexcept {
  if (requested != 0)
    return requested;
  ::cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0)
    return 1;
  return static_cast<unsigned>(std::clamp(CPU_COUNT(&set), 1, static_cast<int>(k_max_threads)));
}

void print_error(const std::string& path, int code) {
  std::fprintf(stderr, "saturn-walk: cannot read %s: %s\n", walk::escape_name(path).c_str(), std::strerror(code));
}

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = 0;
  const char* root = nullptr;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--threads") == 0) {
      if (i + 1 >= argc)
        usage(2);
      threads = parse_threads(argv[++i]);
    } else if (std::strncmp(a, "--threads=", 10) == 0) {
      threads = parse_threads(a + 10);
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
  // More descriptors let the walk keep more directories open (fs::walk plans with what
  // the limit leaves free).
  static_cast<void>(apps::raise_nofile());
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
  constexpr bool leave_pool_running = false;  // sanitizer builds check the pool's full shutdown too
#else
  constexpr bool leave_pool_running = true;   // the process ends right below: skip joining workers
#endif
  saturn::fs::walk_options opts;
  const char* full = std::getenv("SATURN_WALK_FULL_READS");
  opts.full_reads = full != nullptr && full[0] == '1';
  opts.on_error = [](const saturn::fs::walk_error& e) { print_error(e.path, e.code); };
  std::unique_ptr<saturn::thread_pool> pool;
  saturn::fs::fs_result<saturn::fs::walk_stats> r = saturn::fs::walk_stats{};
  try {
    pool = std::make_unique<saturn::thread_pool>(saturn::pool_options{
        .threads = worker_count(threads),
        .mode = saturn::pool_mode::cpu_bound,
        .spin_before_park_us = k_spin_before_park_us});
    r = pool->block_on(saturn::fs::walk(root, opts));
  } catch (const std::exception& e) {  // starting the workers failed (threads, memory)
    std::fprintf(stderr, "saturn-walk: cannot start the walk: %s\n", e.what());
    return 1;
  }
  int status = 0;
  if (!r) {  // ROOT itself could not be looked up: nothing counted
    print_error(root, r.err().code.value());
    status = 1;
  } else {
    status = r->errors == 0 ? 0 : 1;
    std::printf("%llu file(s)\n%llu directories(s)\n", static_cast<unsigned long long>(r->files),
                static_cast<unsigned long long>(r->dirs));
  }
  if (std::fflush(stdout) != 0 && status == 0) {
    std::perror("saturn-walk: cannot write the counts");
    status = 1;
  }
  if (leave_pool_running) {
    // lifetime: the walk has ended, so no worker touches it again; the idle workers end
    // with the process (std::_Exit skips waking and joining every worker — milliseconds
    // on a busy machine, where each wake waits for a CPU).
    static_cast<void>(pool.release());
    std::_Exit(status);  // no static destructors with the workers still there
  }
  return status;
}
