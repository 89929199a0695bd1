// Shared helpers for the loop tests: RAII pipes and temp files, a raw `operation` that
// records its completions, a watchdog that turns a hang into a loud failure, and
// `loop_access` (the event_loop's test hook) for the few white-box checks.
#pragma once

#include <gtest/gtest.h>
#include <saturn/ext/operation.hpp>
#include <saturn/loop/event_loop.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace saturn {
/// The friend event_loop declares for tests. Read-only peeks, loop thread only.
struct loop_access {
  static bool wake_armed(const event_loop& l) noexcept { return l.m_wake_armed; }
  /// Any thread: true while the loop has announced that it sleeps in the kernel.
  static bool sleeping(const event_loop& l) noexcept { return l.m_sleeping.load(std::memory_order_seq_cst); }
};
}  // namespace saturn

namespace saturn_test {

using namespace std::chrono_literals;

/// Spins (yielding) until `l` sleeps in the kernel. Any thread.
inline void wait_until_sleeping(const saturn::event_loop& l) {
  while (!saturn::loop_access::sleeping(l))
    std::this_thread::yield();
}

/// "Read/write at the file position" (the documented -1 offset).
inline constexpr std::uint64_t file_pos = static_cast<std::uint64_t>(-1);

/// Both loop modes the ring can run in: DEFER_TASKRUN (true) and COOP_TASKRUN (false).
inline std::string mode_name(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "defer_taskrun" : "coop_taskrun";
}

/// A pipe; both ends closed on destruction.
struct pipe_fds {
  int r = -1;
  int w = -1;
  pipe_fds() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2 failed");
    r = fds[0];
    w = fds[1];
  }
  ~pipe_fds() {
    if (r >= 0)
      ::close(r);
    if (w >= 0)
      ::close(w);
  }
  pipe_fds(const pipe_fds&) = delete;
  pipe_fds& operator=(const pipe_fds&) = delete;
  void close_write() {
    ::close(w);
    w = -1;
  }
};

/// An unlinked temporary file opened read/write.
struct temp_file {
  int fd = -1;
  temp_file() {
    char name[] = "/tmp/saturn_loop_test_XXXXXX";
    fd = ::mkostemp(name, O_CLOEXEC);
    if (fd < 0)
      throw std::runtime_error("mkostemp failed");
    ::unlink(name);
  }
  ~temp_file() { ::close(fd); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  std::string contents() const {
    std::string s(4096, '\0');
    ssize_t n = ::pread(fd, s.data(), s.size(), 0);
    s.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return s;
  }
};

/// A raw tier operation that counts its completions and keeps the last result.
struct raw_op : saturn::operation {
  int res = 1;
  unsigned flags = 0;
  int calls = 0;
  raw_op() { m_complete = &done; }
  static void done(saturn::operation* self, int r, unsigned f) noexcept {
    auto* op = static_cast<raw_op*>(self);
    op->res = r;
    op->flags = f;
    ++op->calls;
  }
};

/// Aborts the process with `what` if not destroyed within `limit`: a hang becomes a
/// failure with a reason instead of a ctest timeout.
class watchdog {
 public:
  explicit watchdog(std::chrono::milliseconds limit, std::string what)
      : m_what(std::move(what)), m_thread([this, limit] {
          std::unique_lock lock(m_mutex);
          if (!m_cv.wait_for(lock, limit, [this] { return m_done; })) {
            std::fprintf(stderr, "watchdog: %s (no progress after %lld ms)\n", m_what.c_str(),
                         static_cast<long long>(limit.count()));
            std::fflush(stderr);
            std::abort();
          }
        }) {}
  ~watchdog() {
    {
      std::lock_guard lock(m_mutex);
      m_done = true;
    }
    m_cv.notify_one();
    m_thread.join();
  }
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

 private:
  std::string m_what;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_done = false;
  std::thread m_thread;
};

/// Runs `loop` (blocking turns) until `op` has completed at least once. Loop thread.
inline void run_until_done(saturn::event_loop& loop, const raw_op& op) {
  while (op.calls == 0)
    loop.run_once(true);
}

}  // namespace saturn_test
