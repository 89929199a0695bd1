// A real resolver for the DNS tests: dnsmasq, started on 127.0.0.1 at a free port with a
// fixed set of names under .test, and stopped (by its PID) when the object goes. Also a
// silent UDP "server" that takes queries and never answers, and a raw UDP query to see
// what dnsmasq itself answers (the TC bit).
#pragma once

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace dns_test {

/// The dnsmasq binary, or "" when it is not installed.
inline std::string dnsmasq_path() {
  for (const char* p : {"/usr/sbin/dnsmasq", "/usr/bin/dnsmasq", "/sbin/dnsmasq"})
    if (::access(p, X_OK) == 0)
      return p;
  return "";
}

/// A port on 127.0.0.1 free for both UDP and TCP when asked (another process may take
/// it before it is used: the caller retries).
inline std::uint16_t free_port() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    int u = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ::sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::socklen_t len = sizeof a;
    if (::bind(u, reinterpret_cast<::sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(u, reinterpret_cast<::sockaddr*>(&a), &len) != 0) {
      ::close(u);
      continue;
    }
    int t = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = ::bind(t, reinterpret_cast<::sockaddr*>(&a), sizeof a) == 0;
    ::close(t);
    ::close(u);
    if (ok)
      return ntohs(a.sin_port);
  }
  return 0;
}

/// The addresses of big.test: enough A records that the answer does not fit a UDP
/// datagram (512 bytes without EDNS, 1232 with dnsmasq's default EDNS size), so the
/// server sets TC and the resolver must ask again over TCP.
inline std::vector<std::string> big_addresses() {
  std::vector<std::string> v;
  for (int i = 1; i <= 100; ++i)
    v.push_back("10.1." + std::to_string(i / 200) + "." + std::to_string(i % 200 + 1));
  return v;
}

/// dnsmasq serving, authoritative for .test (--local: an unknown name there is NXDOMAIN):
///   a.test     127.0.0.2          v6.test  ::1          both.test  127.0.0.2 and ::1
///   two.test   127.0.0.3, then 127.0.0.1                slow.test  127.0.0.4, then 127.0.0.1
///   big.test   big_addresses()
class dnsmasq {
 public:
  dnsmasq() {
    const std::string bin = dnsmasq_path();
    if (bin.empty())
      return;
    char log_template[] = "/tmp/saturn-dnsmasq-XXXXXX";
    const int log_fd = ::mkstemp(log_template);
    m_log = log_template;
    for (int attempt = 0; attempt < 5 && m_pid <= 0; ++attempt) {
      const std::uint16_t port = free_port();
      std::vector<std::string> args{bin,
                                    "--keep-in-foreground",
                                    "--port=" + std::to_string(port),
                                    "--listen-address=127.0.0.1",
                                    "--bind-interfaces",
                                    "--no-resolv",
                                    "--no-hosts",
                                    "--no-negcache",
                                    "--conf-file=/dev/null",
                                    "--pid-file=",
                                    "--log-facility=-",
                                    "--local=/test/",
                                    "--host-record=a.test,127.0.0.2",
                                    "--host-record=v6.test,::1",
                                    "--host-record=both.test,127.0.0.2,::1",
                                    "--host-record=two.test,127.0.0.3",
                                    "--host-record=two.test,127.0.0.1",
                                    "--host-record=slow.test,127.0.0.4",
                                    "--host-record=slow.test,127.0.0.1"};
      for (const std::string& a : big_addresses())
        args.push_back("--host-record=big.test," + a);
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::dup2(log_fd, 1);
        ::dup2(log_fd, 2);
        std::vector<char*> argv;
        for (auto& a : args)
          argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(127);
      }
      if (pid < 0)
        break;
      if (wait_ready(pid, port)) {
        m_pid = pid;
        m_port = port;
      }
    }
    ::close(log_fd);
  }
  ~dnsmasq() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGTERM);
      int status = 0;
      bool gone = false;
      for (int i = 0; i < 200 && !gone; ++i) {
        gone = ::waitpid(m_pid, &status, WNOHANG) == m_pid;
        if (!gone)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (!gone) {
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, &status, 0);
      }
    }
    if (!m_log.empty())
      ::unlink(m_log.c_str());
  }
  dnsmasq(const dnsmasq&) = delete;
  dnsmasq& operator=(const dnsmasq&) = delete;

  bool running() const noexcept { return m_pid > 0; }
  std::uint16_t port() const noexcept { return m_port; }
  /// "127.0.0.1:PORT", for resolve_options::servers.
  std::string server() const { return "127.0.0.1:" + std::to_string(m_port); }
  /// What dnsmasq wrote (for a failure message).
  std::string log() const {
    std::ifstream f(m_log);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

 private:
  /// True once dnsmasq accepts TCP on `port` (it binds UDP and TCP together); false if it
  /// exited (the port was taken) or did not come up within 5 s (then it is killed).
  static bool wait_ready(pid_t pid, std::uint16_t port) {
    for (int i = 0; i < 500; ++i) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid)
        return false;
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      ::sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      const bool up = ::connect(fd, reinterpret_cast<::sockaddr*>(&a), sizeof a) == 0;
      ::close(fd);
      if (up)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return false;
  }

  pid_t m_pid = -1;
  std::uint16_t m_port = 0;
  std::string m_log;
};

/// A UDP socket on 127.0.0.1 that receives DNS queries and never answers them.
class silent_server {
 public:
  silent_server() {
    m_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    ::sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::socklen_t len = sizeof a;
    if (::bind(m_fd, reinterpret_cast<::sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(m_fd, reinterpret_cast<::sockaddr*>(&a), &len) == 0)
      m_port = ntohs(a.sin_port);
  }
  ~silent_server() { ::close(m_fd); }
  silent_server(const silent_server&) = delete;
  silent_server& operator=(const silent_server&) = delete;

  std::string server() const { return "127.0.0.1:" + std::to_string(m_port); }
  /// Datagrams received so far (drains them).
  int drain() {
    char buf[2048];
    while (::recv(m_fd, buf, sizeof buf, 0) > 0)
      ++m_received;
    return m_received;
  }

 private:
  int m_fd = -1;
  std::uint16_t m_port = 0;
  int m_received = 0;
};

/// Sends one A query for `name` over UDP (no EDNS) to 127.0.0.1:port and returns the
/// answer's flags (bytes 2-3), or -1 when nothing came back within 2 s.
inline int udp_query_flags(std::uint16_t port, const std::string& name) {
  std::vector<unsigned char> q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};  // id, RD, 1 question
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string::npos)
      dot = name.size();
    q.push_back(static_cast<unsigned char>(dot - start));
    for (std::size_t i = start; i < dot; ++i)
      q.push_back(static_cast<unsigned char>(name[i]));
    start = dot + 1;
  }
  q.insert(q.end(), {0, 0, 1, 0, 1});  // root, type A, class IN
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ::sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int flags = -1;
  if (::sendto(fd, q.data(), q.size(), 0, reinterpret_cast<::sockaddr*>(&a), sizeof a) ==
      static_cast<ssize_t>(q.size())) {
    ::pollfd p{fd, POLLIN, 0};
    unsigned char buf[4096];
    if (::poll(&p, 1, 2000) == 1) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n >= 4)
        flags = buf[2] << 8 | buf[3];
    }
  }
  ::close(fd);
  return flags;
}

}  // namespace dns_test
