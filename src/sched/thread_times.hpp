// What the kernel says about one thread of this process, for the stall detector's
// watchdog: its CPU time so far (/proc/self/task/TID/schedstat, first field) and whether
// it is blocked in the kernel now (/proc/self/task/TID/stat, state S or D). Both files are
// kept open and read with one pread each.
//
// Why not the run-queue wait (schedstat's second field): the kernel adds a wait to it only
// when the wait ends, so a thread waiting for a CPU right now shows none of it, and a
// thread that gets a CPU one slice in ten looks as if it had waited a fraction of the
// time. CPU time plus the samples in which the thread was blocked measures what its task
// held the worker for, and leaves out the rest: time runnable without a CPU.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace saturn::detail {

class thread_times {
 public:
  thread_times() = default;
  thread_times(const thread_times&) = delete;
  thread_times& operator=(const thread_times&) = delete;
  ~thread_times() { close_all(); }

  /// Nanoseconds thread `tid` has run on a CPU (updated by the kernel at least every
  /// tick), or -1 where it cannot be read (no such thread, no schedstat).
  std::int64_t cpu_ns(int tid) noexcept {
    char buf[128];
    if (!read(tid, m_schedstat, "schedstat", buf, sizeof buf))
      return -1;
    unsigned long long on_cpu = 0;
    if (std::sscanf(buf, "%llu", &on_cpu) != 1)
      return -1;
    return static_cast<std::int64_t>(on_cpu);
  }

  /// True if thread `tid` is blocked in the kernel now (state S or D: a system call that
  /// waits, a page fault on I/O); false if it runs, waits for a CPU, or cannot be read.
  bool blocked(int tid) noexcept {
    char buf[512];
    if (!read(tid, m_stat, "stat", buf, sizeof buf))
      return false;
    const char* paren = std::strrchr(buf, ')');  // the name may hold spaces and ')'
    if (paren == nullptr || paren[1] != ' ')
      return false;
    return paren[2] == 'S' || paren[2] == 'D';
  }

 private:
  struct file {
    int fd = -1;
    int tid = 0;
  };

  static bool read(int tid, file& f, const char* name, char* buf, std::size_t size) noexcept {
    if (tid <= 0)
      return false;
    if (f.tid != tid) {
      if (f.fd >= 0)
        ::close(f.fd);
      char path[64];
      std::snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, name);
      f.fd = ::open(path, O_RDONLY | O_CLOEXEC);
      f.tid = tid;
    }
    if (f.fd < 0)
      return false;
    const ssize_t n = ::pread(f.fd, buf, size - 1, 0);
    if (n <= 0)
      return false;
    buf[n] = '\0';
    return true;
  }

  void close_all() noexcept {
    for (file* f : {&m_schedstat, &m_stat})
      if (f->fd >= 0)
        ::close(f->fd);
  }

  file m_schedstat;
  file m_stat;
};

}  // namespace saturn::detail
