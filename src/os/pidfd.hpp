// pidfd_open and pidfd_send_signal as raw syscalls: glibc 2.36's <sys/pidfd.h> declares
// them without extern "C" (fixed in 2.37), so C++ cannot link against them.
#pragma once

#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace saturn::os::detail {

inline int pidfd_open(pid_t pid) noexcept { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0u)); }

inline int pidfd_send_signal(int pidfd, int sig) noexcept {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0u));
}

}  // namespace saturn::os::detail
