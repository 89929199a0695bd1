// Cancellation racing completion in saturn's I/O awaitables, under the simulator: for each
// awaitable a deadline (with_timeout) and the event that completes it are placed at
// seed-chosen virtual times, so across seeds both win. Every outcome must be one a real
// kernel could give — a timed-out receive or accept consumed nothing, a timed-out write
// wrote nothing — and no descriptor may leak either way.
#include <saturn/fs/file.hpp>
#include <saturn/net.hpp>
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

using namespace std::chrono_literals;
using saturn::task;
namespace net = saturn::net;
namespace sim = saturn::sim;

namespace {

int open_fds() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n;
}

struct tally {
  int completed = 0;
  int timed_out = 0;
};

std::chrono::nanoseconds draw(sim::world& w) { return std::chrono::microseconds(1 + w.random_below(40)); }

task<void> send_later(net::tcp_stream* s, std::chrono::nanoseconds after, const std::string* msg) {
  co_await saturn::sleep_for(after);
  auto r = co_await s->send(std::as_bytes(std::span(*msg)));
  EXPECT_TRUE(r.has_value());
}

/// recv (one-shot) and receive (multishot) on TCP: a timed-out one consumed nothing.
task<void> stream_receive(sim::world& w, tally* t, bool multishot) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(l->local_address()->port()));
  auto s = co_await l->accept();
  const std::string msg = "twelve bytes";
  auto sender = saturn::spawn(send_later(&*c, draw(w), &msg));
  std::string got;
  std::byte buf[64];
  if (multishot) {
    auto r = co_await saturn::with_timeout(draw(w), s->receive());
    if (r) {
      ++t->completed;
      got.append(reinterpret_cast<const char*>(r->data()), r->size());
    } else {
      ++t->timed_out;
    }
  } else {
    auto r = co_await saturn::with_timeout(draw(w), s->recv(buf));
    if (r) {
      ++t->completed;
      got.append(reinterpret_cast<const char*>(buf), *r);
    } else {
      ++t->timed_out;
    }
  }
  co_await sender;
  while (got.size() < msg.size()) {  // the rest, without a deadline: nothing was lost
    if (multishot) {
      auto r = co_await s->receive();
      EXPECT_TRUE(r.has_value() && !r->empty());
      if (!r || r->empty())
        break;
      got.append(reinterpret_cast<const char*>(r->data()), r->size());
    } else {
      auto r = co_await s->recv(buf);
      EXPECT_TRUE(r.has_value() && *r > 0);
      if (!r || *r == 0)
        break;
      got.append(reinterpret_cast<const char*>(buf), *r);
    }
  }
  EXPECT_EQ(got, msg);
  co_await c->close();
  co_await s->close();
}

task<void> connect_later(std::uint16_t port, std::chrono::nanoseconds after, net::tcp_stream* out) {
  co_await saturn::sleep_for(after);
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  EXPECT_TRUE(c.has_value());
  if (c)
    *out = std::move(*c);
}

/// accept: a timed-out accept did not take (and lose) the connection.
task<void> accept_race(sim::world& w, tally* t) {
  net::listen_options lo;
  lo.multishot = w.random_below(2) == 0;
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0), lo);
  net::tcp_stream client;
  auto connector = saturn::spawn(connect_later(l->local_address()->port(), draw(w), &client));
  auto a = co_await saturn::with_timeout(draw(w), l->accept());
  if (a)
    ++t->completed;
  else
    ++t->timed_out;
  co_await connector;
  net::tcp_stream server;
  if (a) {
    server = std::move(*a);
  } else {
    auto again = co_await l->accept();
    EXPECT_TRUE(again.has_value()) << "the connection was lost by the timed-out accept";
    if (again)
      server = std::move(*again);
  }
  // The accepted socket is the client's peer.
  EXPECT_EQ(server.peer_address()->port(), client.local_address()->port());
  co_await client.close();
  co_await server.close();
}

task<void> drain_later(int fd, std::chrono::nanoseconds after, std::size_t* drained) {
  co_await saturn::sleep_for(after);
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    *drained += static_cast<std::size_t>(n);
}

/// write to a full pipe: a timed-out write wrote nothing (an atomic 512-byte write).
task<void> write_race(sim::world& w, tally* t) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
  std::size_t filled = 0;
  static const char junk[4096] = {};
  for (ssize_t n; (n = ::write(p[1], junk, sizeof junk)) > 0;)
    filled += static_cast<std::size_t>(n);
  std::size_t drained = 0;
  auto drainer = saturn::spawn(drain_later(p[0], draw(w), &drained));
  static const std::byte block[512] = {};
  auto r = co_await saturn::with_timeout(draw(w), saturn::write(p[1], block));
  co_await drainer;
  std::size_t written = 0;
  if (r) {
    ++t->completed;
    written = *r;
    EXPECT_EQ(written, sizeof block);
  } else {
    ++t->timed_out;
  }
  char buf[65536];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;)
    drained += static_cast<std::size_t>(n);
  EXPECT_EQ(drained, filled + written) << "what the pipe held is what was reported written";
  ::close(p[0]);
  ::close(p[1]);
}

task<void> write_later(int fd, std::chrono::nanoseconds after) {
  co_await saturn::sleep_for(after);
  EXPECT_EQ(::write(fd, "x", 1), 1);
}

/// poll: either the event or the deadline; the byte is still there either way.
task<void> poll_race(sim::world& w, tally* t) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
  auto writer = saturn::spawn(write_later(p[1], draw(w)));
  auto r = co_await saturn::with_timeout(draw(w), saturn::poll(p[0], POLLIN));
  co_await writer;
  if (r) {
    ++t->completed;
    EXPECT_TRUE((*r & POLLIN) != 0);
  } else {
    ++t->timed_out;
  }
  char c;
  EXPECT_EQ(::read(p[0], &c, 1), 1);
  ::close(p[0]);
  ::close(p[1]);
}

/// open through the ring under a deadline: an open that completed is returned (and closed
/// by its owner), never leaked by the cancel.
task<void> open_race(sim::world& w, tally* t, std::string path) {
  auto r = co_await saturn::with_timeout(std::chrono::nanoseconds(w.random_below(25'000)),
                                         saturn::fs::file::open(path, O_RDONLY));
  if (r && *r)
    ++t->completed;
  else
    ++t->timed_out;
}

task<void> drain_socket_later(net::tcp_stream* s, std::chrono::nanoseconds after, std::size_t* got) {
  co_await saturn::sleep_for(after);
  std::byte buf[65536];
  for (;;) {
    auto r = co_await saturn::with_timeout(std::chrono::microseconds(50), s->recv(buf));
    if (!r || *r == 0)
      break;
    *got += *r;
  }
}

/// send on a full socket: a timed-out send sent nothing; the peer receives exactly what
/// was reported sent.
task<void> send_race(sim::world& w, tally* t) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(l->local_address()->port()));
  auto s = co_await l->accept();
  // Fill the path: non-blocking sends until the kernel says no.
  static const char junk[65536] = {};
  std::size_t queued = 0;
  for (ssize_t n; (n = ::send(c->fd(), junk, sizeof junk, MSG_DONTWAIT | MSG_NOSIGNAL)) > 0;)
    queued += static_cast<std::size_t>(n);
  std::size_t got = 0;
  // Draining a full loopback path takes many receives: the deadline is drawn over as long.
  auto drainer = saturn::spawn(drain_socket_later(&*s, std::chrono::microseconds(w.random_below(500)), &got));
  static const std::byte block[256] = {};
  auto r = co_await saturn::with_timeout(std::chrono::microseconds(1 + w.random_below(2000)), c->send_some(block));
  std::size_t sent = 0;
  if (r) {
    ++t->completed;
    sent = *r;
  } else {
    ++t->timed_out;
  }
  co_await drainer;
  std::byte buf[65536];
  for (;;) {
    auto more = co_await saturn::with_timeout(std::chrono::microseconds(50), s->recv(buf));
    if (!more || *more == 0)
      break;
    got += *more;
  }
  EXPECT_EQ(got, queued + sent) << "what arrived is what was reported sent";
  co_await c->close();
  co_await s->close();
}

/// connect under a deadline: a connect that completed is returned (and closed), and
/// one that timed out leaves no descriptor behind.
task<void> connect_race(sim::world& w, tally* t) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  const std::uint16_t port = l->local_address()->port();
  // A loopback connect is decided at once (the deadline cannot win): half the runs cut the
  // port for a seed-chosen while, so the deadline races the heal.
  const bool cut = w.random_below(2) == 0;
  if (cut)
    w.partition(port);
  auto heal = saturn::spawn([](sim::world* wp, std::uint16_t p, std::chrono::nanoseconds after) -> task<void> {
    co_await saturn::sleep_for(after);
    wp->heal(p);
  }(&w, port, draw(w)));
  auto c = co_await saturn::with_timeout(draw(w), net::tcp_stream::connect(net::address::loopback_v4(port)));
  co_await heal;
  if (c) {
    ++t->completed;
    co_await c->close();
  } else {
    ++t->timed_out;
  }
}

/// fsync and statx of a file under a deadline: either completes or times out; the file is
/// intact either way.
task<void> fsync_race(sim::world& w, tally* t, std::string path) {
  auto f = co_await saturn::fs::file::open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  EXPECT_TRUE(f.has_value());
  if (!f)
    co_return;
  const std::string text = "durable?";
  EXPECT_TRUE(co_await f->write_at(std::as_bytes(std::span(text)), 0));
  auto r = co_await saturn::with_timeout(std::chrono::nanoseconds(w.random_below(25'000)), f->sync());
  auto st = co_await saturn::with_timeout(std::chrono::nanoseconds(w.random_below(25'000)), f->stat());
  if (r && *r && st && *st)
    ++t->completed;
  else
    ++t->timed_out;
  (void)co_await f->close();
  EXPECT_EQ(std::filesystem::file_size(path), text.size());
}

template <class Make>
void race(const char* what, Make make, int seeds = 150) {
  const int fds_before = open_fds();
  tally t;
  for (int seed = 1; seed <= seeds; ++seed) {
    sim::outcome o = sim::run(static_cast<std::uint64_t>(seed), {}, [&](sim::world& w) { return make(w, &t); });
    ASSERT_TRUE(o.ok) << what << ", seed " << seed << ": " << o.failure;
  }
  EXPECT_GT(t.completed, seeds / 20) << what << ": the completion should win sometimes";
  EXPECT_GT(t.timed_out, seeds / 20) << what << ": the deadline should win sometimes";
  EXPECT_EQ(open_fds(), fds_before) << what << ": a descriptor leaked";
}

TEST(SimCancelRace, Recv) { race("recv", [](sim::world& w, tally* t) { return stream_receive(w, t, false); }); }
TEST(SimCancelRace, MultishotReceive) {
  race("receive", [](sim::world& w, tally* t) { return stream_receive(w, t, true); });
}
TEST(SimCancelRace, Accept) { race("accept", [](sim::world& w, tally* t) { return accept_race(w, t); }); }
TEST(SimCancelRace, Write) { race("write", [](sim::world& w, tally* t) { return write_race(w, t); }); }
TEST(SimCancelRace, Poll) { race("poll", [](sim::world& w, tally* t) { return poll_race(w, t); }); }
TEST(SimCancelRace, Send) { race("send", [](sim::world& w, tally* t) { return send_race(w, t); }); }
TEST(SimCancelRace, Connect) { race("connect", [](sim::world& w, tally* t) { return connect_race(w, t); }); }
TEST(SimCancelRace, FsyncAndStatx) {
  const std::string path = (std::filesystem::temp_directory_path() / "saturn-sim-fsync-race").string();
  race("fsync", [&path](sim::world& w, tally* t) { return fsync_race(w, t, path); });
  std::filesystem::remove(path);
}
TEST(SimCancelRace, Open) {
  race("open", [](sim::world& w, tally* t) { return open_race(w, t, "/proc/self/status"); });
}

}  // namespace
