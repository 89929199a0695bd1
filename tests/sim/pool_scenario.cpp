// The thread_pool scenario (scenarios.hpp): work spread over a simulated pool's workers.
#include <saturn/sched/thread_pool.hpp>
#include <saturn/sync/channel.hpp>
#include <saturn/sync/mutex.hpp>
#include <saturn/task.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scenarios.hpp"

namespace saturn::sim_scenarios {
namespace {

using namespace std::chrono_literals;

[[noreturn]] void pool_fail(const std::string& what) { throw std::runtime_error(what); }

/// Shared by every task through a shared_ptr: after a failure, or a deadlock that tears
/// the pool down, the tasks are destroyed in an order nobody chose, and one destroyed
/// after the scenario's own frame must still find the mutex and channel it points into.
struct shared_state {
  explicit shared_state(std::size_t capacity) : ch(capacity) {}
  channel<std::uint64_t> ch;
  mutex lock;
  std::uint64_t guarded_sum = 0;  // under `lock`
  std::uint64_t spawned_sum = 0;  // only one step runs at a time: plain adds
  unsigned workers_seen = 0;      // bit per worker a task ran on
};

void note_worker(shared_state& s) {
  auto* pool = dynamic_cast<thread_pool*>(scheduler::current());
  if (pool == nullptr)
    pool_fail("a task of the pool scenario ran outside the pool");
  if (auto i = pool->worker_index())
    s.workers_seen |= 1u << *i;
}

task<void> producer(sim::world& w, std::shared_ptr<shared_state> st, std::uint64_t first, std::uint64_t n) {
  channel<std::uint64_t>& ch = st->ch;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (w.random_below(4) == 0)
      co_await yield();
    if (w.random_below(8) == 0)
      co_await sleep_for(std::chrono::microseconds(w.random_below(200)));
    auto r = co_await ch.send(first + i);
    if (!r)
      pool_fail("a send failed: " + r.err().message());
  }
}

task<void> consumer(std::shared_ptr<shared_state> st) {
  shared_state& s = *st;
  channel<std::uint64_t>& ch = s.ch;
  for (;;) {
    auto v = co_await ch.receive();
    if (!v)
      break;  // closed and drained
    note_worker(s);
    const std::uint64_t x = *v;
    auto g = co_await s.lock.lock();
    if (!g)
      pool_fail("a lock failed: " + g.err().message());
    const std::uint64_t before = s.guarded_sum;
    co_await yield();  // hold the lock across a suspension: others must wait
    if (s.guarded_sum != before)
      pool_fail("the mutex let another task in while held");
    s.guarded_sum = before + x;
  }
}

task<void> leaf(std::shared_ptr<shared_state> st, std::uint64_t v) {
  note_worker(*st);
  st->spawned_sum += v;
  co_return;
}

/// A spawn storm from one task: most of it is stolen by the other workers.
task<void> spawn_storm(std::shared_ptr<shared_state> st, std::uint64_t n) {
  std::vector<join_handle<void>> hs;
  hs.reserve(n);
  for (std::uint64_t i = 1; i <= n; ++i)
    hs.push_back(spawn(leaf(st, i)));
  for (auto& h : hs)
    co_await h;
}

/// Bytes through a pipe: the reader and the writer are separate tasks, possibly on
/// different workers (and rings).
task<void> pipe_reader(int fd, std::size_t want, std::shared_ptr<std::uint64_t> sum) {
  std::byte buf[64];
  std::size_t got = 0;
  while (got < want) {
    auto r = co_await read(fd, buf);
    if (!r)
      pool_fail("a pipe read failed: " + r.err().message());
    if (*r == 0)
      pool_fail("the pipe ended early");
    for (std::size_t i = 0; i < *r; ++i)
      *sum += static_cast<std::uint64_t>(buf[i]);
    got += *r;
  }
}

task<void> pipe_writer(sim::world& w, int fd, std::size_t n) {
  std::size_t sent = 0;
  while (sent < n) {
    std::byte chunk[16];
    const std::size_t k = std::min<std::size_t>(1 + w.random_below(sizeof chunk), n - sent);
    for (std::size_t i = 0; i < k; ++i)
      chunk[i] = static_cast<std::byte>((sent + i) & 0x7f);
    auto r = co_await write(fd, std::span<const std::byte>(chunk, k));
    if (!r)
      pool_fail("a pipe write failed: " + r.err().message());
    sent += *r;
    if (w.random_below(3) == 0)
      co_await sleep_for(std::chrono::microseconds(w.random_below(100)));
  }
}

task<std::uint64_t> square(std::uint64_t v) { co_return v * v; }

/// Work handed to a second pool (cpu_bound, one or two workers), item by item, the
/// joins sometimes at once and sometimes later, with yields and pauses between: its
/// workers go to sleep between items, and the next item often arrives while one is on
/// its way to sleep (between its last look and registering as a sleeper). A spawn from
/// this pool is an injection plus a notify from a foreign thread, spawn_on a task placed
/// on one worker, and each join queues this pool's task back (join_foreign). A lost
/// wake-up leaves work queued with every worker asleep, which the simulation reports.
task<void> cross_pool(sim::world& w) {
  pool_options o;
  o.threads = 1 + static_cast<unsigned>(w.random_below(2));
  o.mode = pool_mode::cpu_bound;
  thread_pool other(o);
  std::uint64_t got = 0, want = 0;
  std::vector<join_handle<std::uint64_t>> later;
  const unsigned n = 4 + static_cast<unsigned>(w.random_below(12));
  for (unsigned i = 0; i < n; ++i) {
    const std::uint64_t v = i + 1;
    want += v * v;
    auto h = w.random_below(2) == 0 ? other.spawn(square(v))
                                    : other.spawn_on(static_cast<unsigned>(w.random_below(o.threads)), square(v));
    if (w.random_below(2) == 0)
      got += co_await h;
    else
      later.push_back(std::move(h));
    if (w.random_below(3) == 0)
      co_await yield();
    if (w.random_below(4) == 0)
      co_await sleep_for(std::chrono::microseconds(1 + w.random_below(50)));
  }
  for (auto& h : later)
    got += co_await h;
  if (got != want)
    pool_fail("the other pool's squares summed " + std::to_string(got) + ", not " + std::to_string(want));
}

}  // namespace

task<void> await_all(std::vector<join_handle<void>>& hs, std::exception_ptr& first) {
  for (auto& h : hs) {
    try {
      co_await h;
    } catch (...) {
      if (!first)
        first = std::current_exception();
    }
  }
  hs.clear();
}

task<void> pool_scenario(sim::world& w) {
  auto st = std::make_shared<shared_state>(1 + w.random_below(4));
  shared_state& s = *st;
  const unsigned producers = 1 + static_cast<unsigned>(w.random_below(3));
  const unsigned consumers = 1 + static_cast<unsigned>(w.random_below(3));
  const std::uint64_t per = 10 + w.random_below(30);
  std::vector<join_handle<void>> prod, rest;
  for (unsigned i = 0; i < consumers; ++i)
    rest.push_back(spawn(consumer(st)));
  for (unsigned i = 0; i < producers; ++i)
    prod.push_back(spawn(producer(w, st, std::uint64_t(i) * 1000 + 1, per)));
  const std::uint64_t storm_n = 50 + w.random_below(150);
  rest.push_back(spawn(spawn_storm(st, storm_n)));

  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
    pool_fail("pipe2 failed");
  const std::size_t pipe_bytes = 100 + w.random_below(400);
  auto pipe_sum = std::make_shared<std::uint64_t>(0);
  rest.push_back(spawn(pipe_reader(p[0], pipe_bytes, pipe_sum)));
  rest.push_back(spawn(pipe_writer(w, p[1], pipe_bytes)));
  rest.push_back(spawn(cross_pool(w)));

  std::exception_ptr first;
  co_await await_all(prod, first);
  s.ch.close();  // the consumers drain what is queued, then end
  co_await await_all(rest, first);
  ::close(p[0]);
  ::close(p[1]);
  if (first)
    std::rethrow_exception(first);

  std::uint64_t want = 0;
  for (unsigned i = 0; i < producers; ++i)
    for (std::uint64_t k = 0; k < per; ++k)
      want += std::uint64_t(i) * 1000 + 1 + k;
  if (s.guarded_sum != want)
    pool_fail("consumers summed " + std::to_string(s.guarded_sum) + ", producers sent " + std::to_string(want));
  if (s.spawned_sum != storm_n * (storm_n + 1) / 2)
    pool_fail("the spawn storm summed " + std::to_string(s.spawned_sum));
  std::uint64_t pipe_want = 0;
  for (std::size_t i = 0; i < pipe_bytes; ++i)
    pipe_want += i & 0x7f;
  if (*pipe_sum != pipe_want)
    pool_fail("the pipe delivered a sum of " + std::to_string(*pipe_sum) + ", " + std::to_string(pipe_want) + " written");
  if (s.workers_seen == 0)
    pool_fail("no task saw its worker");
}

}  // namespace saturn::sim_scenarios
