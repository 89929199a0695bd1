// Runs one of the programs in apps/ as a child process and reports how it ended: for the
// command-line tests (bad arguments, signals, ports in use); and runs a shell command for
// its output (the interop tests' curl, nghttp, h2load, python3).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace saturn_test {

/// Runs `cmd` through the shell: its standard output and its pclose() status.
inline std::pair<std::string, int> run_command(const std::string& cmd) {
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f)
    return {"", -1};
  char tmp[4096];
  while (std::size_t n = std::fread(tmp, 1, sizeof tmp, f))
    out.append(tmp, n);
  return {out, ::pclose(f)};
}

struct program_outcome {
  int status = -1;  ///< exit status, or -1 when it did not exit by itself within 5 s
  std::string err;  ///< what it wrote to stderr
};

/// Runs `bin` with `args`, stdout to /dev/null; `sig` != 0 sends that signal after 300 ms.
/// A child still running after 5 s is killed (status -1).
inline program_outcome run_program(const std::string& bin, std::vector<std::string> args, int sig = 0) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0)
    return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], 2);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);  // --help's text
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  if (sig != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(pid, sig);
  }
  program_outcome o;
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 500 && (done = ::waitpid(pid, &status, WNOHANG)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  } else if (WIFEXITED(status)) {
    o.status = WEXITSTATUS(status);
  }
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0)
    o.err.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  return o;
}

}  // namespace saturn_test
