// A server program run as a child process for the tests that talk to real peers (nginx,
// Python, Go): started with its stdout on a pipe, killed (SIGTERM, then SIGKILL after
// 1 s) and reaped when destroyed, so no test leaves a process behind. Also the nginx
// configuration those tests share.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace saturn_test {

/// A child process killed and reaped when destroyed. Threading: one test thread.
class child_server {
 public:
  /// Runs argv (PATH searched) with stdout to a pipe that stays open while the child runs.
  explicit child_server(std::vector<std::string> argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return;
    m_pid = ::fork();
    if (m_pid == 0) {
      ::dup2(fds[1], 1);
      std::vector<char*> a;
      for (auto& s : argv)
        a.push_back(s.data());
      a.push_back(nullptr);
      ::execvp(a[0], a.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    m_out = fds[0];
  }
  child_server(const child_server&) = delete;
  child_server& operator=(const child_server&) = delete;
  ~child_server() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGTERM);
      int st = 0;
      for (int i = 0; i < 50 && ::waitpid(m_pid, &st, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (::waitpid(m_pid, &st, WNOHANG) == 0) {
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, &st, 0);
      }
    }
    if (m_out >= 0)
      ::close(m_out);
  }
  /// The next line the child printed, without its newline (blocks until it prints one or
  /// ends its output).
  std::string first_line() {
    std::string line;
    char c;
    while (m_out >= 0 && ::read(m_out, &c, 1) == 1 && c != '\n')
      line += c;
    return line;
  }
  bool started() const noexcept { return m_pid > 0; }

 private:
  pid_t m_pid = -1;
  int m_out = -1;
};

/// Debian's nginx, or empty when it is not installed (scripts/deps test installs it).
inline std::string nginx_binary() { return ::access("/usr/sbin/nginx", X_OK) == 0 ? "/usr/sbin/nginx" : ""; }

/// Writes `prefix`/nginx.conf: one worker process in the foreground, nothing written
/// outside `prefix` (pid, temp paths; errors to stderr), and `http_body` inside `http {}`.
/// Returns the argv that runs it.
inline std::vector<std::string> nginx_config(const std::string& prefix, const std::string& http_body) {
  ::mkdir(prefix.c_str(), 0700);
  std::ofstream(prefix + "/nginx.conf") << "worker_processes 1; daemon off; master_process off;\n"
                                        << "pid " << prefix << "/nginx.pid; error_log stderr error;\n"
                                        << "events { worker_connections 256; }\n"
                                        << "http { access_log off; client_body_temp_path " << prefix << "/b;\n"
                                        << "  proxy_temp_path " << prefix << "/p; fastcgi_temp_path " << prefix
                                        << "/f; uwsgi_temp_path " << prefix << "/u; scgi_temp_path " << prefix
                                        << "/s;\n"
                                        << http_body << "\n}\n";
  return {nginx_binary(), "-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", "stderr"};
}

}  // namespace saturn_test
