// kv_server: a sharded in-memory key-value store over TCP, one shard per pool worker.
//
// Shows: the thread-per-core layout on a thread_pool (a shard's map is touched only by
// its own worker, so it needs no lock: each command goes to the owning worker with
// saturn::spawn_on and the session awaits the reply); line reading with an idle timeout
// (stream_socket::set_read_timeout + buffered_reader::read_line); and a graceful stop on
// SIGINT / SIGTERM with os::shutdown_signals: accepting stops, every connection finishes
// the request it is in (an idle one closes at its idle timeout), then the program exits 0.
//
// Protocol: one line per request, one line per reply.
//   SET key value...  -> OK                  GET key -> VALUE value... | NOT_FOUND
//   DEL key           -> DELETED | NOT_FOUND STATS   -> KEYS n0 n1 ... (keys per shard)
//
// Run:  example_kv_server --port 7000 --idle-ms 5000 [--threads 4]
//       printf 'SET a 1\nGET a\n' | nc -q1 127.0.0.1 7000
// It prints "listening on 127.0.0.1:PORT" once it accepts (--port 0: a free port).
#include <saturn/net.hpp>
#include <saturn/os.hpp>
#include <saturn/sched.hpp>
#include <saturn/task.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

using saturn::task;
namespace net = saturn::net;
using std::chrono::milliseconds;

using shard = std::unordered_map<std::string, std::string>;

struct store {
  std::vector<shard> shards;
  explicit store(unsigned n) : shards(n) {}
  unsigned owner(std::string_view key) const {
    return static_cast<unsigned>(std::hash<std::string_view>{}(key) % shards.size());
  }
};

struct command {
  std::string op, key, value;  // value: the rest of the line, spaces included
};

command parse(std::string_view line) {
  auto word = [&line] {
    const auto sp = line.find(' ');
    std::string w(line.substr(0, sp));
    line = sp == std::string_view::npos ? std::string_view{} : line.substr(sp + 1);
    return w;
  };
  command c;
  c.op = word();
  c.key = word();
  c.value = std::string(line);
  return c;
}

// Runs on the shard's own worker: spawn_on starts it there, and it never suspends, so it
// ends there too. Only that worker ever touches the map.
task<std::string> execute(shard& s, command c) {
  if (c.key.empty())
    co_return "ERROR usage: SET key value | GET key | DEL key | STATS";
  if (c.op == "SET") {
    s.insert_or_assign(std::move(c.key), std::move(c.value));
    co_return "OK";
  }
  if (c.op == "GET") {
    auto it = s.find(c.key);
    co_return it == s.end() ? std::string("NOT_FOUND") : "VALUE " + it->second;
  }
  if (c.op == "DEL")
    co_return s.erase(c.key) ? "DELETED" : "NOT_FOUND";
  co_return "ERROR unknown command " + c.op;
}

task<std::size_t> count(const shard& s) { co_return s.size(); }

task<std::string> stats(store& db) {
  std::string reply = "KEYS";
  for (unsigned i = 0; i < db.shards.size(); ++i)
    reply += ' ' + std::to_string(co_await saturn::spawn_on(i, count(db.shards[i])));
  co_return reply;
}

task<void> session(net::tcp_stream s, store& db, milliseconds idle, std::stop_token draining) {
  s.set_read_timeout(idle);  // a read that gets no byte for this long ends with timed_out
  net::buffered_reader in(s);
  while (!draining.stop_requested()) {  // once draining, the request in progress is the last
    auto line = co_await in.read_line(64 * 1024);
    if (!line || !*line)
      break;  // idle too long, a line too long, a recv error, or the client hung up
    command cmd = parse(**line);
    std::string reply;
    if (cmd.op == "STATS") {
      reply = co_await stats(db);
    } else {
      const unsigned owner = db.owner(cmd.key);
      reply = co_await saturn::spawn_on(owner, execute(db.shards[owner], std::move(cmd)));
    }
    reply += '\n';
    auto sent = co_await s.send(std::as_bytes(std::span(reply)));
    if (!sent)
      break;
  }
  auto closed = co_await s.close();
  (void)closed;
}

task<saturn::result<void>> accept_loop(net::tcp_listener& l, saturn::task_group& sessions, store& db,
                                       milliseconds idle, std::stop_token draining) {
  for (;;) {
    auto c = co_await l.accept();
    if (!c)
      co_return c.err();  // a listener error, or cancelled by the shutdown
    sessions.spawn(session(std::move(*c), db, idle, draining));
  }
}

task<int> serve(net::tcp_listener& l, store& db, milliseconds idle, const saturn::os::shutdown_signals& sigs) {
  std::stop_source draining;
  int status = 0;
  // The group ends once every session has: that is the drain.
  co_await saturn::task_group::run([&](saturn::task_group& sessions) -> task<void> {
    auto first = co_await saturn::when_any(accept_loop(l, sessions, db, idle, draining.get_token()), sigs.wait());
    if (first.index() == 0) {
      std::fprintf(stderr, "kv_server: %s\n", std::get<0>(first).err().message().c_str());
      status = 1;
    }
    l.close();  // new connections are refused from here
    draining.request_stop();
    std::fprintf(stderr, "kv_server: draining\n");
  });
  co_return status;
}

int main(int argc, char** argv) {
  long port = 0, threads = 0, idle_ms = 10'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    long* into = flag == "--port" ? &port : flag == "--threads" ? &threads : flag == "--idle-ms" ? &idle_ms : nullptr;
    if (into == nullptr) {
      std::fprintf(stderr, "usage: %s [--port N] [--idle-ms MS] [--threads N]\n", argv[0]);
      return 2;
    }
    *into = std::atol(argv[i + 1]);
  }
  auto sigs = saturn::os::shutdown_signals::install();  // from here SIGINT/SIGTERM stop gracefully
  if (!sigs) {
    std::fprintf(stderr, "kv_server: %s\n", sigs.err().message().c_str());
    return 1;
  }
  saturn::pool_options po;
  po.threads = static_cast<unsigned>(threads);
  saturn::thread_pool pool(po);
  auto listener = net::tcp_listener::bind(net::address::loopback_v4(static_cast<std::uint16_t>(port)));
  if (!listener) {
    std::fprintf(stderr, "kv_server: %s\n", listener.err().message().c_str());
    return 1;
  }
  std::printf("listening on %s\n", listener->local_address()->to_string().c_str());
  std::fflush(stdout);
  store db(pool.threads());
  return pool.block_on(serve(*listener, db, milliseconds(idle_ms), *sigs));
}
