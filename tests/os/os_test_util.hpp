// Helpers the os tests share: a signal sent to this process from another thread after a
// delay, "no child of this process is left", and a command's captured output. One copy
// here, so the module's files can be compiled together in a unity batch
// (tests/CMakeLists.txt) without two definitions of one name.
#pragma once

#include <saturn/os.hpp>
#include <saturn/saturn.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

namespace os_test {

/// A thread that sends `sig` to this process after `delay`. Join it.
inline std::thread kill_later(int sig, std::chrono::milliseconds delay) {
  return std::thread([sig, delay] {
    std::this_thread::sleep_for(delay);
    ::kill(::getpid(), sig);
  });
}

/// True when this process has no child left, exited or running (waitid says ECHILD).
inline bool no_children_left() {
  siginfo_t si{};
  return ::waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD;
}

/// Runs `cmd` to its end and captures its output.
inline saturn::task<saturn::result<saturn::os::child_output>> run_output(saturn::os::command cmd) {
  co_return co_await cmd.output();
}

}  // namespace os_test
