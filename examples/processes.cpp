// Processes: a counter service found through the registry, a client that monitors it,
// and a supervisor that restarts a worker after it crashes.
#include <saturn/saturn.hpp>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <variant>

namespace {

using client_msg = std::variant<int, saturn::down_message>;

struct get {
  saturn::pid_of<client_msg> reply_to;
};
using counter_msg = std::variant<int, get>;

/// Adds every int it receives; answers `get` with the total; ends on a negative number.
saturn::process<counter_msg> counter() {
  auto self = co_await saturn::this_process;
  int total = 0;
  for (;;) {
    counter_msg m = co_await self.receive();
    if (auto* v = std::get_if<int>(&m)) {
      if (*v < 0)
        co_return;
      total += *v;
    } else {
      saturn::send(std::get<get>(m).reply_to, total);
    }
  }
}

saturn::process<client_msg> client(std::atomic<bool>* done) {
  auto self = co_await saturn::this_process;
  auto c = *saturn::whereis<counter_msg>("counter");
  self.monitor(c);
  for (int i = 1; i <= 10; ++i)
    saturn::send(c, i);
  saturn::send(c, get{self.pid()});
  // Selective receive: the reply (an int), whatever else is queued.
  client_msg total = co_await self.receive([](const client_msg& m) { return m.index() == 0; });
  std::printf("total from the counter: %d\n", std::get<int>(total));
  saturn::send(c, -1);  // ask it to end
  client_msg down = co_await self.receive();
  std::printf("counter ended: %s\n", std::get<saturn::down_message>(down).reason.describe().c_str());
  *done = true;
}

saturn::process<int> worker(int generation) {
  std::printf("worker generation %d started\n", generation);
  int m = co_await saturn::receive();
  if (m == 0)
    throw std::runtime_error("worker crashed");
}

}  // namespace

int main() {
  saturn::thread_pool pool({.threads = 2});
  std::atomic<bool> done{false};
  auto c = saturn::spawn_process(pool, counter);
  saturn::register_name("counter", c);
  saturn::spawn_process(pool, client, &done);

  std::atomic<int> generation{0};
  std::atomic<std::uint64_t> current{0};
  auto sup = saturn::start_supervisor(pool, {{"worker", [&] {
                                                auto p = saturn::spawn_process(pool, worker, ++generation);
                                                current = (std::uint64_t{p.generation} << 32) | p.index;
                                                return saturn::pid(p);
                                              }}});
  // `current` is stored after spawn_process returns (generation counts up before): wait
  // for the pid itself, not for the generation, or the crash message could go nowhere.
  while (current.load() == 0)
    std::this_thread::yield();
  const std::uint64_t first = current.load();
  saturn::send(saturn::pid_of<int>::unchecked({static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(first >> 32)}), 0);
  while (generation.load() < 2 || !done.load())
    std::this_thread::yield();
  saturn::send(sup, saturn::supervisor_stop{});
  std::printf("restarted once; supervisor stopped\n");
  return 0;
}
