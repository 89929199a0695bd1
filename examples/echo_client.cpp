// A TCP echo server and client in one program on one runtime (127.0.0.1, a free port):
// the server receives through the loop's provided buffers and sends the bytes back; the
// client checks every echo. Ends by itself in well under a second.
#include <saturn/net.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/runtime.hpp>

#include <cstdio>
#include <cstring>
#include <string>

using saturn::task;
namespace net = saturn::net;

// One connection: echo until the client closes.
task<void> echo(net::tcp_stream s) {
  for (;;) {
    auto chunk = co_await s.receive();  // a span into the loop's receive buffers
    if (!chunk || chunk->empty())
      co_return;
    auto sent = co_await s.send(*chunk);  // sent straight from there
    if (!sent)
      co_return;
  }
}

task<int> run() {
  auto listener = net::tcp_listener::bind(net::address::loopback_v4(0));
  if (!listener) {
    std::fprintf(stderr, "%s\n", listener.err().message().c_str());
    co_return 1;
  }
  const auto addr = *listener->local_address();
  auto server = saturn::spawn([](net::tcp_listener* l) -> task<> {
    auto c = co_await l->accept();
    if (c)
      co_await echo(std::move(*c));
  }(&*listener));

  auto client = co_await net::tcp_stream::connect(addr, std::chrono::seconds(1));
  if (!client) {
    std::fprintf(stderr, "%s\n", client.err().message().c_str());
    co_return 1;
  }
  int good = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string msg = "message " + std::to_string(i);
    auto sent = co_await client->send(std::as_bytes(std::span(msg)));
    if (!sent)
      co_return 1;
    std::string back(msg.size(), '\0');
    std::size_t got = 0;
    while (got < back.size()) {
      auto n = co_await client->recv(std::as_writable_bytes(std::span(back)).subspan(got));
      if (!n || *n == 0)
        co_return 1;
      got += *n;
    }
    good += back == msg;
  }
  auto closed = co_await client->close();  // the server sees end of stream and returns
  co_await server;
  std::printf("echoed %d/100 messages via %s (%s)\n", good, addr.to_string().c_str(),
              closed ? "closed cleanly" : closed.err().message().c_str());
  co_return good == 100 ? 0 : 1;
}

int main() {
  saturn::runtime rt;
  return rt.block_on(run());
}
