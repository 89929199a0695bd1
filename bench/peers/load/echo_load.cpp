// echo-load: the echo suite's closed-loop load generator (docs/workloads.md, "echo").
//
//   echo-load --port P [--host 127.0.0.1] [--conns C] [--size S] [--duration D]
//             [--warmup W] [--samples N] [--threads T] [--scenario NAME]
//             [--runtime NAME] [--server-threads W] [--server-pid PID]
//
// C connections, split round-robin over T threads (each with its own epoll instance and
// nothing shared while the load runs). Per connection: write one S-byte message, wait
// until all S bytes are back, compare them with what was sent, record the round trip,
// write the next. The first 8 bytes of a message carry its sequence number, the rest a
// pattern that depends on the connection and the sequence, so a stale or reordered echo
// fails the comparison. Any wrong byte, extra byte, closed or refused connection ends
// the run with exit status 1 and a message on stderr.
//
// All connections are made first; then echoes completing in the first W seconds are
// discarded and N back-to-back windows of D seconds are measured. Every round trip of
// a window is kept; percentiles are nearest-rank (the ceil(p*n)-th smallest), computed
// in integers. The window with the median message count gives the latency and CPU
// figures; msgs_per_sec is that median, with the min and max over the windows.
//
// Prints one JSON line on stdout:
//   suite scenario runtime threads conns size load_threads duration_s samples msgs
//   msgs_per_sec msgs_per_sec_min msgs_per_sec_max p50_us p99_us p999_us max_us
//   load_cpu_pct load_cpu_us_per_msg machine_cpu_pct [server_cpu_pct
//   server_cpu_us_per_msg other_cpu_pct]
// CPU figures are 100 per fully busy CPU over the window; the server's come from
// /proc/PID/stat of --server-pid (all its threads), "other" is the machine minus the
// server minus this program.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  int conns = 1;
  int size = 64;
  double duration = 5;
  double warmup = 1;
  int samples = 1;
  int threads = 1;
  std::string scenario = "custom";
  std::string runtime = "unknown";
  int server_threads = 0;
  long server_pid = 0;
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "echo-load: %s\n", what.c_str());
  std::exit(1);
}

[[noreturn]] void usage(const std::string& what) {
  std::fprintf(stderr,
               "echo-load: %s\nusage: echo-load --port P [--host H] [--conns C] [--size S] "
               "[--duration D] [--warmup W] [--samples N] [--threads T] [--scenario NAME] "
               "[--runtime NAME] [--server-threads W] [--server-pid PID]\n",
               what.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage("missing value for " + a);
    std::string v = argv[++i];
    char* end = nullptr;
    auto num = [&](double lo) {
      double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || d < lo) usage("bad value for " + a + ": " + v);
      return d;
    };
    if (a == "--host") o.host = v;
    else if (a == "--port") o.port = static_cast<int>(num(1));
    else if (a == "--conns") o.conns = static_cast<int>(num(1));
    else if (a == "--size") o.size = static_cast<int>(num(8));
    else if (a == "--duration") o.duration = num(0.01);
    else if (a == "--warmup") o.warmup = num(0);
    else if (a == "--samples") o.samples = static_cast<int>(num(1));
    else if (a == "--threads") o.threads = static_cast<int>(num(1));
    else if (a == "--scenario") o.scenario = v;
    else if (a == "--runtime") o.runtime = v;
    else if (a == "--server-threads") o.server_threads = static_cast<int>(num(0));
    else if (a == "--server-pid") o.server_pid = static_cast<long>(num(1));
    else usage("unknown option " + a);
  }
  if (o.port == 0) usage("--port is required");
  o.threads = std::min(o.threads, o.conns);
  return o;
}

using Clock = std::chrono::steady_clock;

std::int64_t ns_since(Clock::time_point t0, Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - t0).count();
}

/// One connection's state: the message in flight and how much of it went out / came back.
struct Conn {
  int fd = -1;
  int id = 0;
  std::uint64_t seq = 0;
  std::vector<unsigned char> out, in;
  std::size_t sent = 0, got = 0;
  Clock::time_point started;
  bool want_write = false;
};

void fill_message(Conn& c) {
  std::memcpy(c.out.data(), &c.seq, sizeof c.seq);
  for (std::size_t i = sizeof c.seq; i < c.out.size(); ++i)
    c.out[i] = static_cast<unsigned char>((i * 131 + c.seq * 7 + static_cast<std::size_t>(c.id)) & 0xff);
}

/// Round trips of one thread, per measured window (nanoseconds, chunked: no copies).
struct Recorder {
  std::vector<std::deque<std::uint32_t>> windows;
};

class Worker {
 public:
  Worker(const Options& o, std::vector<Conn> conns, Clock::time_point t0) : o_(o), conns_(std::move(conns)), t0_(t0) {
    rec_.windows.resize(static_cast<std::size_t>(o.samples));
  }

  void run() {
    ep_ = epoll_create1(0);
    if (ep_ < 0) fail(std::string("epoll_create1: ") + std::strerror(errno));
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = i;
      if (epoll_ctl(ep_, EPOLL_CTL_ADD, conns_[i].fd, &ev) != 0) fail(std::string("epoll_ctl: ") + std::strerror(errno));
    }
    const std::int64_t warm_ns = static_cast<std::int64_t>(o_.warmup * 1e9);
    const std::int64_t win_ns = static_cast<std::int64_t>(o_.duration * 1e9);
    const std::int64_t end_ns = warm_ns + win_ns * o_.samples;
    for (auto& c : conns_) start_message(c);
    std::vector<epoll_event> evs(256);
    while (ns_since(t0_, Clock::now()) < end_ns) {
      int n = epoll_wait(ep_, evs.data(), static_cast<int>(evs.size()), 10);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(std::string("epoll_wait: ") + std::strerror(errno));
      }
      for (int k = 0; k < n; ++k) {
        Conn& c = conns_[evs[static_cast<std::size_t>(k)].data.u64];
        std::uint32_t e = evs[static_cast<std::size_t>(k)].events;
        if (e & (EPOLLERR | EPOLLHUP)) fail("connection " + std::to_string(c.id) + " failed or was closed by the server");
        if (e & EPOLLOUT) write_some(c);
        if (e & EPOLLIN) read_some(c, warm_ns, win_ns);
      }
    }
    close(ep_);
  }

  Recorder& recorder() { return rec_; }

 private:
  void start_message(Conn& c) {
    ++c.seq;
    fill_message(c);
    c.sent = c.got = 0;
    c.started = Clock::now();
    write_some(c);
  }

  void set_write_interest(Conn& c, bool on) {
    if (c.want_write == on) return;
    c.want_write = on;
    epoll_event ev{};
    ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
    ev.data.u64 = static_cast<std::uint64_t>(&c - conns_.data());
    if (epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev) != 0) fail(std::string("epoll_ctl: ") + std::strerror(errno));
  }

  void write_some(Conn& c) {
    while (c.sent < c.out.size()) {
      ssize_t w = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (w > 0) {
        c.sent += static_cast<std::size_t>(w);
      } else if (w < 0 && errno == EINTR) {
        continue;
      } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        set_write_interest(c, true);
        return;
      } else {
        fail("send on connection " + std::to_string(c.id) + ": " + std::strerror(errno));
      }
    }
    set_write_interest(c, false);
  }

  void read_some(Conn& c, std::int64_t warm_ns, std::int64_t win_ns) {
    // Room for more than the message: a server that sends extra bytes is caught here.
    ssize_t r = recv(c.fd, c.in.data() + c.got, c.in.size() - c.got, 0);
    if (r == 0) fail("connection " + std::to_string(c.id) + " closed by the server");
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      fail("recv on connection " + std::to_string(c.id) + ": " + std::strerror(errno));
    }
    c.got += static_cast<std::size_t>(r);
    if (c.got > c.sent) fail("connection " + std::to_string(c.id) + ": more bytes came back than were sent");
    if (c.got < c.out.size()) return;
    if (std::memcmp(c.in.data(), c.out.data(), c.out.size()) != 0)
      fail("connection " + std::to_string(c.id) + ": echo of message " + std::to_string(c.seq) + " differs from what was sent");
    auto now = Clock::now();
    std::int64_t at = ns_since(t0_, now) - warm_ns;
    if (at >= 0) {
      std::int64_t w = at / win_ns;
      if (w < o_.samples) {
        std::int64_t rtt = ns_since(c.started, now);
        rec_.windows[static_cast<std::size_t>(w)].push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(rtt, UINT32_MAX)));
      }
    }
    start_message(c);
  }

  const Options& o_;
  std::vector<Conn> conns_;
  Clock::time_point t0_;
  Recorder rec_;
  int ep_ = -1;
};

int connect_one(const Options& o, int id) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fail(std::string("socket: ") + std::strerror(errno));
  timeval tv{5, 0};  // a server that never accepts fails the run instead of hanging it
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(o.port));
  if (inet_pton(AF_INET, o.host.c_str(), &a.sin_addr) != 1) usage("--host must be an IPv4 address: " + o.host);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    fail("connect " + std::to_string(id) + " to " + o.host + ":" + std::to_string(o.port) + ": " + std::strerror(errno));
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) fail(std::string("O_NONBLOCK: ") + std::strerror(errno));
  return fd;
}

/// CPU counters read at a window boundary (clock ticks).
struct CpuMark {
  long long machine_busy = 0, machine_total = 0, server = -1;
  double self_s = 0;
};

long long server_ticks(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!pid || !std::getline(f, line)) return -1;
  auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream rest(line.substr(close_paren + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; rest >> field; ++i) {  // field 3 is the state; utime 14, stime 15
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) { stime = std::atoll(field.c_str()); break; }
  }
  return utime + stime;
}

CpuMark mark(long pid) {
  CpuMark m;
  std::ifstream f("/proc/stat");
  std::string cpu;
  f >> cpu;
  long long v[8] = {};
  for (auto& x : v) f >> x;
  for (auto x : v) m.machine_total += x;
  m.machine_busy = m.machine_total - v[3] - v[4];  // minus idle and iowait
  m.server = server_ticks(pid);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  m.self_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  return m;
}

int cpus_in_proc_stat() {
  std::ifstream f("/proc/stat");
  std::string line;
  int n = 0;
  while (std::getline(f, line))
    if (line.rfind("cpu", 0) == 0 && line.size() > 3 && line[3] >= '0' && line[3] <= '9') ++n;
  return std::max(n, 1);
}

/// The ceil(num/den * n)-th smallest of sorted v, in microseconds.
double nearest_rank_us(const std::vector<std::uint32_t>& v, std::uint64_t num, std::uint64_t den) {
  if (v.empty()) return 0;
  std::uint64_t rank = (v.size() * num + den - 1) / den;
  rank = std::clamp<std::uint64_t>(rank, 1, v.size());
  return v[rank - 1] / 1e3;
}

void raise_nofile() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  raise_nofile();
  std::vector<std::vector<Conn>> per_thread(static_cast<std::size_t>(o.threads));
  for (int i = 0; i < o.conns; ++i) {
    Conn c;
    c.id = i;
    c.fd = connect_one(o, i);
    c.out.resize(static_cast<std::size_t>(o.size));
    c.in.resize(static_cast<std::size_t>(o.size) * 2);
    per_thread[static_cast<std::size_t>(i % o.threads)].push_back(std::move(c));
  }
  const auto t0 = Clock::now();
  std::vector<Worker> workers;
  workers.reserve(per_thread.size());
  for (auto& conns : per_thread) workers.emplace_back(o, std::move(conns), t0);
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w.run(); });

  // Window boundaries: CPU counters at the start of each window and at the end.
  std::vector<CpuMark> marks;
  for (int k = 0; k <= o.samples; ++k) {
    std::this_thread::sleep_until(t0 + std::chrono::nanoseconds(static_cast<std::int64_t>((o.warmup + o.duration * k) * 1e9)));
    marks.push_back(mark(o.server_pid));
  }
  for (auto& t : threads) t.join();

  struct Window {
    std::vector<std::uint32_t> rtt;
    double rate = 0;
    int index = 0;
  };
  std::vector<Window> wins(static_cast<std::size_t>(o.samples));
  for (int k = 0; k < o.samples; ++k) {
    auto& w = wins[static_cast<std::size_t>(k)];
    w.index = k;
    for (auto& wk : workers) {
      auto& d = wk.recorder().windows[static_cast<std::size_t>(k)];
      w.rtt.insert(w.rtt.end(), d.begin(), d.end());
    }
    w.rate = static_cast<double>(w.rtt.size()) / o.duration;
  }
  std::vector<Window*> by_rate;
  for (auto& w : wins) by_rate.push_back(&w);
  std::sort(by_rate.begin(), by_rate.end(), [](auto* a, auto* b) { return a->rate < b->rate; });
  Window& med = *by_rate[(by_rate.size() - 1) / 2];
  std::sort(med.rtt.begin(), med.rtt.end());

  const CpuMark& a = marks[static_cast<std::size_t>(med.index)];
  const CpuMark& b = marks[static_cast<std::size_t>(med.index) + 1];
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double msgs = static_cast<double>(med.rtt.size());
  const double load_s = b.self_s - a.self_s;
  const double load_pct = 100.0 * load_s / o.duration;
  const double total = static_cast<double>(b.machine_total - a.machine_total);
  const double machine_pct = total > 0 ? 100.0 * cpus_in_proc_stat() * static_cast<double>(b.machine_busy - a.machine_busy) / total : 0;

  std::printf("{\"suite\":\"echo\",\"scenario\":\"%s\",\"runtime\":\"%s\",\"threads\":%d,\"conns\":%d,"
              "\"size\":%d,\"load_threads\":%d,\"duration_s\":%g,\"samples\":%d,\"msgs\":%zu,"
              "\"msgs_per_sec\":%.1f,\"msgs_per_sec_min\":%.1f,\"msgs_per_sec_max\":%.1f,"
              "\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,"
              "\"load_cpu_pct\":%.1f,\"load_cpu_us_per_msg\":%.3f,\"machine_cpu_pct\":%.1f",
              o.scenario.c_str(), o.runtime.c_str(), o.server_threads, o.conns, o.size, o.threads, o.duration, o.samples,
              med.rtt.size(), med.rate, by_rate.front()->rate, by_rate.back()->rate, nearest_rank_us(med.rtt, 50, 100),
              nearest_rank_us(med.rtt, 99, 100), nearest_rank_us(med.rtt, 999, 1000), med.rtt.empty() ? 0.0 : med.rtt.back() / 1e3,
              load_pct, msgs > 0 ? load_s * 1e6 / msgs : 0.0, machine_pct);
  if (a.server >= 0 && b.server >= 0) {
    const double server_s = static_cast<double>(b.server - a.server) / hz;
    const double server_pct = 100.0 * server_s / o.duration;
    std::printf(",\"server_cpu_pct\":%.1f,\"server_cpu_us_per_msg\":%.3f,\"other_cpu_pct\":%.1f", server_pct,
                msgs > 0 ? server_s * 1e6 / msgs : 0.0, std::max(0.0, machine_pct - server_pct - load_pct));
  }
  std::printf("}\n");
  return 0;
}
