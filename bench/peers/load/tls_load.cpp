// tls-load: the tls suite's load generator (docs/workloads.md, "tls"), on OpenSSL.
//
//   tls-load --port P [--host 127.0.0.1] --scenario NAME [--threads T]
//            [--duration D] [--warmup W] [--samples N] [--proto echo|http]
//            [--tls 1.2|1.3] [--cipher SUITE] [--bulk-mib M] [--path /static/FILE]
//            [--runtime NAME] [--server-pid PID[,PID...]]
//
// NAME starts with handshake_full, handshake_resumed or bulk (the mode; the rest of it,
// say "_rsa", is a label printed back as given):
//
//   full     T threads, each in a loop: TCP connect, a full TLS handshake (no session
//            offered), one exchange checked (echo: 64 bytes back exactly; http: GET
//            /baseline11?a=1&b=1 answered 200 with body "2"), close_notify, close.
//   resumed  the same, each connection offering the session of the thread's previous
//            one (tickets in TLS 1.3, session ids / tickets in 1.2; up to three more
//            exchanges while a TLS 1.3 ticket has not arrived yet); a connection that was
//            not resumed counts as a failure of the scenario.
//   bulk     one connection. echo: M MiB written in 16 KiB SSL_writes while the echo is
//            read back and compared (a position-dependent pattern); MB/s of payload one
//            way. http: GET --path (a file of the same pattern, made by the runner; 200
//            with a Content-Length) again and again on the one keep-alive connection until
//            M MiB of body have arrived, every byte compared; MB/s of body (a download:
//            the server encrypts, the client decrypts).
//
// Handshake scenarios measure N windows of D seconds after W seconds of warm-up; the
// median window gives the figures. CPU: the server's from /proc/PID/stat (all threads of
// every PID given: nginx's workers are processes).
// One JSON line on stdout:
//   suite scenario runtime threads tls conns_per_sec (full/resumed) | mb_per_sec (bulk)
//   samples duration_s server_cpu_pct server_cpu_us_per_op load_cpu_pct
// Any wrong byte, failed handshake or refused connection ends the run with status 1 and
// a message on stderr.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct options {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string scenario = "handshake_full";
  std::string mode;  // full, resumed or bulk, from the scenario's name
  unsigned threads = 1;
  double duration = 2, warmup = 1;
  unsigned samples = 3;
  std::string proto = "echo";
  std::string tls = "1.3";
  std::string cipher;  // TLS 1.3 suite or TLS 1.2 cipher list; empty: OpenSSL's default order
  unsigned bulk_mib = 256;
  std::string path = "/static/bulk.bin";  // bulk over http: the file to download
  std::string runtime = "unknown";
  std::vector<long> server_pids;  // --server-pid P[,P...]: a multi-process server's workers
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "tls-load: %s\n", why.c_str());
  std::exit(1);
}

std::string ssl_reason() {
  unsigned long e = ERR_get_error();
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

/// CPU ticks (utime + stime) of all threads of `pid`.
long long cpu_ticks_of(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = s.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::istringstream in(s.substr(close + 2));
  std::string field;
  long long ut = 0, st = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14)
      ut = std::stoll(field);
    if (i == 15)
      st = std::stoll(field);
  }
  return ut + st;
}

long long cpu_ticks(const std::vector<long>& pids) {
  long long t = 0;
  for (long p : pids)
    t += cpu_ticks_of(p);
  return t;
}

double self_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int connect_tcp(const options& o) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(o.port));
  ::inet_pton(AF_INET, o.host.c_str(), &a.sin_addr);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    die("connect: " + std::string(std::strerror(errno)));
  return fd;
}

SSL_CTX* make_ctx(const options& o) {
  SSL_CTX* c = SSL_CTX_new(TLS_client_method());
  const int v = o.tls == "1.2" ? TLS1_2_VERSION : TLS1_3_VERSION;
  SSL_CTX_set_min_proto_version(c, v);
  SSL_CTX_set_max_proto_version(c, v);
  SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);  // the benchmark measures the server
  if (!o.cipher.empty()) {
    const int ok = o.tls == "1.3" ? SSL_CTX_set_ciphersuites(c, o.cipher.c_str())
                                  : SSL_CTX_set_cipher_list(c, o.cipher.c_str());
    if (ok != 1)
      die("--cipher " + o.cipher + ": " + ssl_reason());
  }
  SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  return c;
}

bool read_exact(SSL* ssl, char* buf, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    int r = SSL_read(ssl, buf + got, static_cast<int>(n - got));
    if (r <= 0)
      return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

/// One checked exchange over an established connection.
void exchange(SSL* ssl, const options& o) {
  if (o.proto == "http") {
    static const char req[] = "GET /baseline11?a=1&b=1 HTTP/1.1\r\nHost: localhost\r\n\r\n";
    if (SSL_write(ssl, req, sizeof req - 1) != sizeof req - 1)
      die("write: " + ssl_reason());
    std::string resp;
    char buf[4096];
    while (resp.find("\r\n\r\n") == std::string::npos || resp.back() != '2') {
      int r = SSL_read(ssl, buf, sizeof buf);
      if (r <= 0)
        die("http answer cut short: " + resp);
      resp.append(buf, static_cast<std::size_t>(r));
      if (resp.size() > 4096)
        die("http answer too long");
    }
    if (resp.rfind("HTTP/1.1 200", 0) != 0)
      die("http answer not 200: " + resp.substr(0, 40));
    return;
  }
  char msg[64], back[64];
  for (int i = 0; i < 64; ++i)
    msg[i] = static_cast<char>('A' + i % 26);
  if (SSL_write(ssl, msg, sizeof msg) != sizeof msg)
    die("write: " + ssl_reason());
  if (!read_exact(ssl, back, sizeof back) || std::memcmp(msg, back, sizeof msg) != 0)
    die("echo differs");
}

struct worker_state {
  std::atomic<std::uint64_t> done{0};
  std::atomic<bool> failed_resume{false};
};

void handshake_loop(const options& o, SSL_CTX* ctx, worker_state& st, const std::atomic<bool>& stop) {
  SSL_SESSION* sess = nullptr;
  const bool resume = o.mode == "resumed";
  while (!stop.load(std::memory_order_relaxed)) {
    int fd = connect_tcp(o);
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set_tlsext_host_name(ssl, "localhost");
    if (resume && sess != nullptr)
      SSL_set_session(ssl, sess);
    if (SSL_connect(ssl) != 1)
      die("handshake: " + ssl_reason());
    exchange(ssl, o);  // also takes a TLS 1.3 ticket in
    // Some servers (Node) send their TLS 1.3 ticket after the first answer: a few more
    // exchanges let it arrive, as it would during a real client's connection.
    for (int extra = 0; resume && extra < 3 && SSL_SESSION_is_resumable(SSL_get0_session(ssl)) != 1; ++extra)
      exchange(ssl, o);
    if (resume) {
      if (sess != nullptr && SSL_session_reused(ssl) != 1)
        st.failed_resume.store(true);
      // Keep the newest resumable session: a server may send no new ticket on a resumed
      // connection (Node), and then the one it accepted is offered again, as a client's
      // session cache does.
      if (SSL_SESSION_is_resumable(SSL_get0_session(ssl)) == 1) {
        SSL_SESSION* next = SSL_get1_session(ssl);
        if (sess != nullptr)
          SSL_SESSION_free(sess);
        sess = next;
      }
    }
    SSL_shutdown(ssl);
    SSL_free(ssl);
    ::close(fd);
    st.done.fetch_add(1, std::memory_order_relaxed);
  }
  if (sess != nullptr)
    SSL_SESSION_free(sess);
}

void run_handshakes(const options& o) {
  SSL_CTX* ctx = make_ctx(o);
  worker_state st;
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (unsigned i = 0; i < o.threads; ++i)
    ts.emplace_back([&] { handshake_loop(o, ctx, st, stop); });
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  struct window {
    double rate, server_pct, server_us, load_pct;
  };
  std::vector<window> ws;
  const long hz = sysconf(_SC_CLK_TCK);
  for (unsigned s = 0; s < o.samples; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t n0 = st.done.load();
    const long long c0 = cpu_ticks(o.server_pids);
    const double l0 = self_cpu_s();
    std::this_thread::sleep_for(std::chrono::duration<double>(o.duration));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double n = static_cast<double>(st.done.load() - n0);
    const double server_s = static_cast<double>(cpu_ticks(o.server_pids) - c0) / hz;
    ws.push_back({n / secs, 100 * server_s / secs, n > 0 ? server_s * 1e6 / n : 0, 100 * (self_cpu_s() - l0) / secs});
  }
  stop.store(true);
  for (auto& t : ts)
    t.join();
  if (st.failed_resume.load())
    die("a connection offered its session and was not resumed");
  std::sort(ws.begin(), ws.end(), [](const window& a, const window& b) { return a.rate < b.rate; });
  const window& m = ws[ws.size() / 2];
  std::printf(
      "{\"suite\":\"tls\",\"scenario\":\"%s\",\"runtime\":\"%s\",\"threads\":%u,\"tls\":\"%s\",\"proto\":\"%s\","
      "\"conns_per_sec\":%.1f,\"conns_per_sec_min\":%.1f,\"conns_per_sec_max\":%.1f,\"samples\":%u,"
      "\"duration_s\":%.2f,\"server_cpu_pct\":%.1f,\"server_cpu_us_per_op\":%.1f,\"load_cpu_pct\":%.1f}\n",
      o.scenario.c_str(), o.runtime.c_str(), o.threads, o.tls.c_str(), o.proto.c_str(), m.rate, ws.front().rate,
      ws.back().rate, o.samples, o.duration, m.server_pct, m.server_us, m.load_pct);
  SSL_CTX_free(ctx);
}

/// The bulk pattern: byte i of the stream (echo) or of the file (http).
char byte_at(std::size_t i) { return static_cast<char>((i * 131 + (i >> 12)) & 0xff); }

/// One bulk connection: the TLS client over a fresh TCP connection, and the clocks the
/// figures come from (wall, the server's CPU, our own), started once connected.
struct bulk_conn {
  SSL_CTX* ctx;
  int fd;
  SSL* ssl;
  long hz = sysconf(_SC_CLK_TCK);
  long long c0 = 0;
  double l0 = 0;
  std::chrono::steady_clock::time_point t0;

  explicit bulk_conn(const options& o) : ctx(make_ctx(o)), fd(connect_tcp(o)), ssl(SSL_new(ctx)) {
    SSL_set_fd(ssl, fd);
    SSL_set_tlsext_host_name(ssl, "localhost");
    if (SSL_connect(ssl) != 1)
      die("handshake: " + ssl_reason());
    c0 = cpu_ticks(o.server_pids);
    l0 = self_cpu_s();
    t0 = std::chrono::steady_clock::now();
  }
  bulk_conn(const bulk_conn&) = delete;
  bulk_conn& operator=(const bulk_conn&) = delete;
  ~bulk_conn() {
    SSL_shutdown(ssl);
    SSL_free(ssl);
    ::close(fd);
    SSL_CTX_free(ctx);
  }
  /// (seconds since connected, the server's CPU seconds, our CPU in % of one CPU).
  void stop(const options& o, double& secs, double& server_s, double& load_pct) const {
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    server_s = static_cast<double>(cpu_ticks(o.server_pids) - c0) / hz;
    load_pct = 100 * (self_cpu_s() - l0) / secs;
  }
};

/// bulk over http: downloads o.path until o.bulk_mib MiB of body arrived; every byte checked.
void run_download(const options& o) {
  bulk_conn c(o);
  SSL* ssl = c.ssl;
  const std::size_t total = static_cast<std::size_t>(o.bulk_mib) << 20;
  const std::string req = "GET " + o.path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  std::vector<char> in(64 * 1024);
  std::string head;
  std::size_t got = 0, files = 0;
  while (got < total) {
    if (SSL_write(ssl, req.data(), static_cast<int>(req.size())) != static_cast<int>(req.size()))
      die("write: " + ssl_reason());
    // The head, then Content-Length bytes of body; what follows the head in a read is body.
    head.clear();
    std::size_t body_at = std::string::npos;
    while (body_at == std::string::npos) {
      int r = SSL_read(ssl, in.data(), static_cast<int>(in.size()));
      if (r <= 0)
        die("http answer cut short in its head: " + head.substr(0, 80));
      head.append(in.data(), static_cast<std::size_t>(r));
      if (auto e = head.find("\r\n\r\n"); e != std::string::npos)
        body_at = e + 4;
      else if (head.size() > 16384)
        die("http head over 16 KiB");
    }
    if (head.rfind("HTTP/1.1 200", 0) != 0)
      die("GET " + o.path + " answered: " + head.substr(0, head.find('\r')));
    std::size_t length = 0;
    bool have_length = false;
    for (std::size_t at = 0; at < body_at;) {
      const std::size_t eol = head.find("\r\n", at);
      std::string line = head.substr(at, eol - at);
      std::transform(line.begin(), line.end(), line.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (line.rfind("content-length:", 0) == 0) {
        length = std::stoull(line.substr(15));
        have_length = true;
      }
      if (line.rfind("content-encoding:", 0) == 0)
        die("the file came encoded (" + line + "); the scenario measures identity bodies");
      at = eol + 2;
    }
    if (!have_length || length == 0)
      die("GET " + o.path + ": no Content-Length (or an empty file)");
    std::size_t pos = 0;
    auto check = [&](const char* p, std::size_t n) {
      if (pos + n > length)
        die("more body than Content-Length");
      for (std::size_t i = 0; i < n; ++i)
        if (p[i] != byte_at(pos + i))
          die("file differs at byte " + std::to_string(pos + i));
      pos += n;
    };
    check(head.data() + body_at, head.size() - body_at);
    while (pos < length) {
      int r = SSL_read(ssl, in.data(), static_cast<int>(std::min(in.size(), length - pos)));
      if (r <= 0)
        die("body cut short after " + std::to_string(pos) + " of " + std::to_string(length) + " bytes");
      check(in.data(), static_cast<std::size_t>(r));
    }
    got += length;
    ++files;
  }
  double secs = 0, server_s = 0, load_pct = 0;
  c.stop(o, secs, server_s, load_pct);
  const double mib = static_cast<double>(got) / (1 << 20);
  std::printf(
      "{\"suite\":\"tls\",\"scenario\":\"%s\",\"runtime\":\"%s\",\"threads\":1,\"tls\":\"%s\",\"cipher\":\"%s\","
      "\"proto\":\"http\",\"mib\":%.1f,\"files\":%zu,\"mb_per_sec\":%.1f,\"server_cpu_pct\":%.1f,"
      "\"server_cpu_us_per_mib\":%.1f,\"load_cpu_pct\":%.1f}\n",
      o.scenario.c_str(), o.runtime.c_str(), o.tls.c_str(), SSL_get_cipher_name(ssl), mib, files,
      static_cast<double>(got) / 1e6 / secs, 100 * server_s / secs, server_s * 1e6 / mib, load_pct);
}

void run_bulk(const options& o) {
  if (o.proto != "echo")
    return run_download(o);
  bulk_conn c(o);
  SSL* ssl = c.ssl;
  const std::size_t total = static_cast<std::size_t>(o.bulk_mib) << 20;
  constexpr std::size_t k_rec = 16 * 1024;
  // One thread (an SSL object is not safe for two): write records while fewer than 8 are
  // unanswered, else read the echo back and check it.
  std::vector<char> out(k_rec), in(64 * 1024);
  std::size_t sent = 0, got = 0;
  while (got < total) {
    if (sent < total && sent - got < 8 * k_rec) {
      for (std::size_t i = 0; i < k_rec; ++i)
        out[i] = byte_at(sent + i);
      if (SSL_write(ssl, out.data(), static_cast<int>(k_rec)) != static_cast<int>(k_rec))
        die("write: " + ssl_reason());
      sent += k_rec;
      continue;
    }
    int r = SSL_read(ssl, in.data(), static_cast<int>(in.size()));
    if (r <= 0)
      die("echo cut short after " + std::to_string(got) + " bytes");
    for (int i = 0; i < r; ++i)
      if (in[static_cast<std::size_t>(i)] != byte_at(got + static_cast<std::size_t>(i)))
        die("echo differs at byte " + std::to_string(got + static_cast<std::size_t>(i)));
    got += static_cast<std::size_t>(r);
  }
  double secs = 0, server_s = 0, load_pct = 0;
  c.stop(o, secs, server_s, load_pct);
  std::printf(
      "{\"suite\":\"tls\",\"scenario\":\"%s\",\"runtime\":\"%s\",\"threads\":1,\"tls\":\"%s\",\"cipher\":\"%s\","
      "\"mib\":%u,\"mb_per_sec\":%.1f,\"server_cpu_pct\":%.1f,\"server_cpu_us_per_mib\":%.1f,\"load_cpu_pct\":%.1f}\n",
      o.scenario.c_str(), o.runtime.c_str(), o.tls.c_str(), SSL_get_cipher_name(ssl), o.bulk_mib, static_cast<double>(total) / 1e6 / secs,
      100 * server_s / secs, server_s * 1e6 / o.bulk_mib, load_pct);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tls-load: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--port") o.port = std::stoi(value());
      else if (a == "--host") o.host = value();
      else if (a == "--scenario") o.scenario = value();
      else if (a == "--threads") o.threads = static_cast<unsigned>(std::stoul(value()));
      else if (a == "--duration") o.duration = std::stod(value());
      else if (a == "--warmup") o.warmup = std::stod(value());
      else if (a == "--samples") o.samples = static_cast<unsigned>(std::stoul(value()));
      else if (a == "--proto") o.proto = value();
      else if (a == "--tls") o.tls = value();
      else if (a == "--cipher") o.cipher = value();
      else if (a == "--bulk-mib") o.bulk_mib = static_cast<unsigned>(std::stoul(value()));
      else if (a == "--path") o.path = value();
      else if (a == "--runtime") o.runtime = value();
      else if (a == "--server-pid") {
        std::stringstream list(value());
        for (std::string p; std::getline(list, p, ',');)
          o.server_pids.push_back(std::stol(p));
      }
      else {
        std::fprintf(stderr, "tls-load: unknown argument %s\n", a.c_str());
        return 2;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "tls-load: bad value for %s\n", a.c_str());
      return 2;
    }
  }
  if (o.scenario.rfind("handshake_full", 0) == 0)
    o.mode = "full";
  else if (o.scenario.rfind("handshake_resumed", 0) == 0)
    o.mode = "resumed";
  else if (o.scenario.rfind("bulk", 0) == 0)
    o.mode = "bulk";
  if (o.port <= 0 || o.port > 65535 || o.threads == 0 || o.samples == 0 || o.mode.empty() ||
      (o.proto != "echo" && o.proto != "http") || (o.tls != "1.2" && o.tls != "1.3")) {
    std::fprintf(stderr, "usage: tls-load --port P --scenario handshake_full*|handshake_resumed*|bulk* "
                         "[--proto echo|http] [--tls 1.2|1.3] ...\n");
    return 2;
  }
  if (o.mode == "bulk")
    run_bulk(o);
  else
    run_handshakes(o);
  return 0;
}
