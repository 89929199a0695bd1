// saturn-echo: the contract's TCP echo server (docs/workloads.md, "echo").
//
//   saturn-echo --port P --threads W [--accept shared|reuseport]
//               [--tls --tls-cert CERT.pem --tls-key KEY.pem]
//
// Binds 127.0.0.1:P, runs a thread_pool in io mode with W workers, one task per
// connection. Each connection task receives through the loop's provided-buffer ring
// (multishot receive: no SQE per message, no buffer per idle connection) and sends the
// bytes straight back from the buffer they arrived in (nothing copied, nothing allocated
// per message). It raises its soft RLIMIT_NOFILE to the hard limit at start (one
// descriptor per connection). With --tls every connection handshakes TLS first (10 s at
// most) and echoes the plaintext: reads of up to 64 KiB decrypted into one buffer per
// connection, each written back as records (tls/stream.hpp). SIGTERM/SIGINT stop it
// gracefully (os::graceful_stop): accepting stops at once, open connections get
// --stop-grace-ms to end by themselves, then are closed; then the pool joins.
// Exit status: 0 after SIGTERM/SIGINT, 1 when the port cannot be bound or the certificate
// cannot be loaded, 2 on a bad command line (an out-of-range value is refused, never
// wrapped or clamped).
#include <saturn/net.hpp>
#include <saturn/os/graceful.hpp>
#include <saturn/os/signal.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/tls.hpp>

#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "listeners.hpp"
#include "nofile.hpp"
#include "start_pool.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

saturn::task<void> echo_connection(saturn::net::tcp_stream s) {
  for (;;) {
    auto rx = s.receive();
    auto r = co_await rx;
    if (!r || r->empty())
      break;  // end of stream or error (reset by peer): drop the connection
    auto tx = s.send(*r);
    auto w = co_await tx;
    if (!w)
      break;
  }
}

saturn::task<void> echo_tls_connection(saturn::net::tcp_stream s, const saturn::tls::context* ctx) {
  auto t = saturn::tls::stream::server(*ctx, std::move(s));
  if (!t)
    co_return;
  auto hs = t->handshake(std::chrono::seconds(10));
  auto shaken = co_await std::move(hs);
  if (!shaken)
    co_return;  // garbage, a timeout, an alert: drop the connection
  std::vector<std::byte> buf(64 * 1024);  // several records a read (tls::stream::read)
  for (;;) {
    auto rd = t->read(buf);
    auto n = co_await std::move(rd);
    if (!n || *n == 0)
      break;  // close_notify, truncation or error
    auto wr = t->write(std::span(buf).first(*n));
    auto w = co_await std::move(wr);
    if (!w)
      break;
  }
  auto sh = t->shutdown();
  (void)co_await std::move(sh);
  auto cl = t->close();
  (void)co_await cl;
}

// With one SO_REUSEPORT listener per worker, each listener's accept loop is placed on its
// own worker (thread_pool::spawn_on), so its multishot accept lives in that worker's ring.
// Connections are the stop's work in flight; the accept loops its acceptors.
saturn::task<void> accept_loop(saturn::os::graceful_stop& gs, saturn::net::tcp_listener listener,
                               const saturn::tls::context* tls) {
  for (;;) {
    auto c = co_await listener.accept();
    if (!c) {
      if (!gs.stopping())  // a stop cancels the accept: that is no failure
        std::fprintf(stderr, "saturn-echo: %s\n", c.err().message().c_str());
      co_return;
    }
    if (tls != nullptr)
      gs.spawn(echo_tls_connection(std::move(*c), tls));
    else
      gs.spawn(echo_connection(std::move(*c)));
  }
}

/// A receive-ring size the loop accepts: a power of two in [1, max]. Anything else would
/// make every connection's receive fail (the server would reset each one it accepts).
CLI::Validator power_of_two(unsigned max) {
  return CLI::Validator(
      [max](std::string& s) -> std::string {
        unsigned long v = 0;
        if (!CLI::detail::lexical_cast(s, v) || v == 0 || v > max || (v & (v - 1)) != 0)
          return "must be a power of two from 1 to " + std::to_string(max) + ", not " + s;
        return {};
      },
      "POWER_OF_TWO");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn TCP echo server (127.0.0.1 only)"};
  unsigned port = 0;
  unsigned threads = 0;
  std::string accept_mode = "shared";
  // 512 x 16 KiB = 8 MiB a worker to start with. The kernel takes provided buffers in ring
  // order, so every buffer of the ring cycles through the cache: with 2,048 (32 MiB) each
  // 16 KiB receive landed in cold memory and its copy was 20% of the server's time in
  // few-large (perf); 512 measured 8.7 us/msg there at one thread (10.3-10.9 with 2,048).
  // Many connections receiving at once (many-small: 1,000) need more than 512: the ring
  // grows by 512 whenever receives find it empty with every buffer out, up to
  // --max-buffers. Without that, nearly every many-small message ended its multishot
  // receive with -ENOBUFS and took a spare-buffer recv and a re-arm (1.47 receive SQEs and
  // an extra CQE a message, traced); grown to 1,536-2,048 it takes none.
  unsigned buffers = 512;
  unsigned max_buffers = 4096;
  unsigned buffer_size = 16384;
  unsigned spin_us = 50;
  unsigned stop_grace_ms = 1000;
  app.add_option("--port", port, "TCP port on 127.0.0.1")->transform(apps::decimal())->required()->check(CLI::Range(1u, 65535u));
  app.add_option("--threads", threads, "worker threads (default: the CPUs this process may use)")->transform(apps::decimal())
      ->check(CLI::Range(1u, 255u));  // the pool's limit
  app.add_option("--accept", accept_mode, "shared: one listener; reuseport: one SO_REUSEPORT listener per worker")
      ->check(CLI::IsMember({"shared", "reuseport"}))
      ->capture_default_str();
  app.add_option("--buffers", buffers, "receive buffers per worker (power of two)")
      ->check(power_of_two(32768))
      ->capture_default_str();
  app.add_option("--max-buffers", max_buffers, "most receive buffers per worker the ring grows to (power of two)")
      ->check(power_of_two(32768))
      ->capture_default_str();
  app.add_option("--buffer-size", buffer_size, "bytes per receive buffer")->check(CLI::Range(1u, 1u << 20))->capture_default_str();
  app.add_option("--spin-us", spin_us, "how long an idle worker polls before parking, in microseconds")->capture_default_str();
  app.add_option("--stop-grace-ms", stop_grace_ms, "at SIGTERM/SIGINT, how long open connections may go on before they are closed")
      ->transform(apps::decimal())
      ->check(CLI::Range(0u, 3600000u))
      ->capture_default_str();
  bool use_tls = false;
  std::string tls_cert, tls_key;
  app.add_flag("--tls", use_tls, "serve TLS (1.2 and 1.3) with --tls-cert and --tls-key");
  app.add_option("--tls-cert", tls_cert, "PEM certificate chain for --tls");
  app.add_option("--tls-key", tls_key, "PEM private key for --tls");
  bool steal_io = false;
  app.add_flag("--steal-io-wakeups", steal_io, "A/B: let other workers steal tasks their ring woke (pin_io_wakeups off)");
  app.footer("SIGTERM/SIGINT stop accepting, give open connections --stop-grace-ms, close them and exit 0. Exit status 1: the port cannot be bound or the workers cannot start; 2: bad arguments.");
  // The ring starts at --buffers and only grows: a start above the most it may grow to is
  // a contradiction, refused like any other bad value.
  app.callback([&] {
    if (use_tls && (tls_cert.empty() || tls_key.empty()))
      throw CLI::ValidationError("--tls", "needs --tls-cert and --tls-key");
    if (buffers > max_buffers)
      throw CLI::ValidationError("--buffers", std::to_string(buffers) + " is more than --max-buffers " +
                                                   std::to_string(max_buffers) + "; raise --max-buffers or lower --buffers");
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the help, or the error and a hint
    return code == 0 ? 0 : 2;       // CLI11's own codes (104-113) are not the usage convention
  }

  std::optional<saturn::tls::context> tls;
  if (use_tls) {
    auto made = saturn::tls::context::server({.certificates = {{tls_cert, tls_key}}});
    if (!made) {
      std::fprintf(stderr, "saturn-echo: %s\n", made.err().message().c_str());
      return 1;
    }
    tls.emplace(std::move(*made));
  }

  (void)apps::raise_nofile();  // one descriptor per connection: take what the hard limit allows

  // Block the stop signals before any worker starts (every worker inherits the mask), so
  // the kernel keeps them for the signalfd that graceful_stop reads (os/signal.hpp).
  if (auto blocked = saturn::os::block_signals({SIGTERM, SIGINT}); !blocked) {
    std::fprintf(stderr, "saturn-echo: %s\n", blocked.err().message().c_str());
    return 1;
  }
  std::signal(SIGPIPE, SIG_IGN);

  saturn::pool_options po;
  po.threads = threads;
  po.mode = saturn::pool_mode::io;
  po.loop.recv_buffer_count = buffers;
  po.loop.recv_buffer_max = max_buffers;
  po.loop.recv_buffer_size = buffer_size;
  po.spin_before_park_us = spin_us;
  po.pin_io_wakeups = !steal_io;
  const auto addr = saturn::net::address::loopback_v4(static_cast<std::uint16_t>(port));
  std::optional<saturn::thread_pool> pool_box;
  if (!apps::start_pool(pool_box, po, "saturn-echo"))
    return 1;
  {
    saturn::thread_pool& pool = *pool_box;
    const unsigned listeners = accept_mode == "reuseport" ? pool.threads() : 1;
    auto bound = apps::bind_listeners(addr, listeners);
    if (!bound) {
      std::fprintf(stderr, "saturn-echo: cannot listen on 127.0.0.1:%u: %s\n", port, bound.err().message().c_str());
      return 1;
    }
    saturn::os::graceful_stop gs(pool);
    for (unsigned i = 0; i < bound->size(); ++i)  // listener i's accept loop on worker i
      gs.spawn_acceptor_on(i, accept_loop(gs, std::move((*bound)[i]), tls ? &*tls : nullptr));
    auto stopped = pool.block_on(gs.stop_on_signals({SIGTERM, SIGINT}, std::chrono::milliseconds(stop_grace_ms)));
    if (!stopped) {
      std::fprintf(stderr, "saturn-echo: %s\n", stopped.err().message().c_str());
      return 1;
    }
  }
  pool_box.reset();  // the pool cancels every operation, destroys every task, joins its workers
  return 0;
}
