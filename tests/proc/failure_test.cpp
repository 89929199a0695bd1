// Links, monitors, the supervisor, the registry, bounded mailboxes, and scale.
#include "helpers.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <fstream>
#include <mutex>
#include <stdexcept>
#include <unistd.h>
#include <variant>
#include <vector>

using namespace saturn;
using proc_test::eventually;

namespace {

using watcher_msg = std::variant<int, down_message, exit_message>;

struct box {
  std::mutex m;
  std::vector<down_message> downs;
  std::vector<exit_message> exits;
  std::atomic<bool> ready{false};  // the watcher's monitors and links are in place
  std::atomic<bool> done{false};
};

/// Monitors `targets`, then collects `n` system messages (down or exit) into `out`.
process<watcher_msg> watcher(std::vector<pid> targets, std::vector<pid> links, int n, box* out) {
  auto self = co_await this_process;
  self.trap_exits();
  for (pid t : targets)
    self.monitor(t);
  for (pid l : links)
    self.link(l);
  send(self.pid(), 0);  // mark "set up" (read below)
  (void)co_await self.receive([](const watcher_msg& m) { return std::holds_alternative<int>(m); });
  out->ready = true;
  for (int i = 0; i < n; ++i) {
    watcher_msg m = co_await self.receive();
    std::lock_guard l(out->m);
    if (auto* d = std::get_if<down_message>(&m))
      out->downs.push_back(*d);
    else if (auto* e = std::get_if<exit_message>(&m))
      out->exits.push_back(*e);
  }
  // Nothing more must arrive: wait a little for a duplicate.
  auto extra = co_await self.receive_for(std::chrono::milliseconds(30));
  if (extra)
    out->exits.push_back(exit_message{{}, {exit_kind::shutdown, nullptr}});  // flags a duplicate
  out->done = true;
}

process<int> waits_then(int mode) {
  (void)co_await saturn::receive();
  if (mode == 1)
    throw std::runtime_error("boom");
}

TEST(Links, MonitorFiresOnceWithReason) {
  thread_pool pool({.threads = 2});
  auto a = spawn_process(pool, waits_then, 1);  // throws
  auto b = spawn_process(pool, waits_then, 0);  // returns
  box out;
  (void)spawn_process(pool, watcher, std::vector<pid>{a, b}, std::vector<pid>{}, 2, &out);
  ASSERT_TRUE(eventually([&] { return out.ready.load(); }));
  send(a, 1);
  send(b, 1);
  ASSERT_TRUE(eventually([&] { return out.done.load(); }));
  ASSERT_EQ(out.downs.size(), 2u);
  EXPECT_TRUE(out.exits.empty());
  for (auto& d : out.downs) {
    if (d.from == pid(a)) {
      EXPECT_EQ(d.reason.kind, exit_kind::error);
      EXPECT_EQ(d.reason.describe(), "error: boom");
    } else {
      EXPECT_EQ(d.from, pid(b));
      EXPECT_TRUE(d.reason.is_normal());
    }
  }
}

TEST(Links, MonitorOfDeadPidGivesNoproc) {
  thread_pool pool({.threads = 2});
  auto a = spawn_process(pool, waits_then, 0);
  send(a, 1);
  ASSERT_TRUE(eventually([&] { return !alive(a); }));
  box out;
  auto w = spawn_process(pool, watcher, std::vector<pid>{a}, std::vector<pid>{a}, 2, &out);
  (void)w;
  ASSERT_TRUE(eventually([&] { return out.done.load(); }));
  ASSERT_EQ(out.downs.size(), 1u);
  EXPECT_EQ(out.downs[0].reason.kind, exit_kind::noproc);
  ASSERT_EQ(out.exits.size(), 1u);
  EXPECT_EQ(out.exits[0].reason.kind, exit_kind::noproc);
}

process<int> linked_pair_member(pid other, std::atomic<int>* exits_seen) {
  auto self = co_await this_process;
  self.link(other);
  try {
    (void)co_await self.receive();
  } catch (const process_exit&) {
    ++*exits_seen;
    throw;
  }
  throw std::runtime_error("die");
}

TEST(Links, ExitPropagatesUnlessTrapped) {
  thread_pool pool({.threads = 2});
  // a <-> b linked; a crashes: b (not trapping) dies with a's reason; the watcher, linked
  // to b and trapping, gets exactly one exit message carrying it.
  std::atomic<int> exits_seen{0};
  auto b = spawn_process(pool, waits_then, 0);
  auto a = spawn_process(pool, linked_pair_member, pid(b), &exits_seen);
  box out;
  (void)spawn_process(pool, watcher, std::vector<pid>{a, b}, std::vector<pid>{b}, 3, &out);
  ASSERT_TRUE(eventually([&] { return out.ready.load() && alive(a); }));
  send(a, 1);  // a throws "die"
  ASSERT_TRUE(eventually([&] { return out.done.load(); }));
  EXPECT_FALSE(alive(a));
  EXPECT_FALSE(alive(b));
  ASSERT_EQ(out.downs.size(), 2u);
  ASSERT_EQ(out.exits.size(), 1u) << "one exit message, no duplicate";
  EXPECT_EQ(out.exits[0].from, pid(b));
  EXPECT_EQ(out.exits[0].reason.kind, exit_kind::error);
  for (auto& d : out.downs)
    EXPECT_EQ(d.reason.kind, exit_kind::error);
}

process<watcher_msg> trapper_pair(pid other, std::atomic<int>* got, std::atomic<bool>* go) {
  auto self = co_await this_process;
  self.trap_exits();
  self.link(other);
  while (!go->load())
    co_await saturn::yield();
  throw std::runtime_error("both die");
  (void)got;
}

TEST(Links, BothEndsDyingAtOnceFireOnce) {
  // Many pairs of linked processes that crash at the same moment: a watcher monitoring
  // both ends sees exactly two downs per pair, never more; no crash, no double free.
  thread_pool pool({.threads = 2});
  constexpr int pairs = 200;
  std::atomic<bool> go{false};
  std::atomic<int> got{0};
  std::vector<pid> all;
  for (int i = 0; i < pairs; ++i) {
    auto a = spawn_process(pool, waits_then, 0);
    auto b = spawn_process(pool, trapper_pair, pid(a), &got, &go);
    all.push_back(a);
    all.push_back(b);
  }
  box out;
  (void)spawn_process(pool, watcher, all, std::vector<pid>{}, 2 * pairs, &out);
  ASSERT_TRUE(eventually([&] { return out.ready.load(); }));
  go = true;
  for (int i = 0; i < pairs; ++i)
    kill(all[2 * i], exit_reason{exit_kind::shutdown, nullptr});  // a dies while b throws
  ASSERT_TRUE(eventually([&] { return out.done.load(); }));
  EXPECT_EQ(out.downs.size(), std::size_t(2 * pairs));
  EXPECT_TRUE(out.exits.empty());
  std::vector<int> per(all.size(), 0);
  for (auto& d : out.downs)
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i] == d.from)
        ++per[i];
  for (int c : per)
    EXPECT_EQ(c, 1);
}

TEST(Supervisor, RestartsThenGivesUpAtIntensity) {
  thread_pool pool({.threads = 2});
  std::atomic<int> starts{0};
  std::mutex m;
  pid current;
  auto start = [&]() -> pid {
    ++starts;
    auto p = spawn_process(pool, waits_then, 1);
    std::lock_guard l(m);
    current = p;
    return p;
  };
  auto sup = start_supervisor(pool, {{"w", start, restart_policy::permanent}}, {.intensity = 3, .period = std::chrono::seconds(60)});
  box out;
  (void)spawn_process(pool, watcher, std::vector<pid>{sup}, std::vector<pid>{}, 1, &out);
  ASSERT_TRUE(eventually([&] { return out.ready.load() && starts.load() == 1; }));
  for (int crash = 1; crash <= 4; ++crash) {
    pid c;
    ASSERT_TRUE(eventually([&] {
      std::lock_guard l(m);
      c = current;
      return starts.load() == crash && alive(c);
    })) << crash;
    send(pid_of<int>::unchecked(c), 1);  // the child crashes
    if (crash < 4) {
      ASSERT_TRUE(eventually([&] { return starts.load() == crash + 1; })) << crash;
    }
  }
  ASSERT_TRUE(eventually([&] { return out.done.load(); }));
  EXPECT_EQ(starts.load(), 4) << "3 restarts allowed, the 4th crash ends the supervisor";
  ASSERT_EQ(out.downs.size(), 1u);
  EXPECT_EQ(out.downs[0].reason.kind, exit_kind::shutdown);
  EXPECT_FALSE(alive(sup));
}

TEST(Supervisor, StopEndsChildren) {
  thread_pool pool({.threads = 2});
  std::atomic<int> starts{0};
  std::mutex m;
  pid child;
  bool have_child = false;  // guarded by m (written on the supervisor's worker)
  auto sup = start_supervisor(pool, {{"w", [&] {
                                        ++starts;
                                        auto p = spawn_process(pool, waits_then, 0);
                                        std::lock_guard l(m);
                                        child = p;
                                        have_child = true;
                                        return pid(p);
                                      }}});
  ASSERT_TRUE(eventually([&] {
    std::lock_guard l(m);
    return have_child && alive(child);
  }));
  send(sup, supervisor_stop{});
  ASSERT_TRUE(eventually([&] {
    std::lock_guard l(m);
    return !alive(sup) && !alive(child);
  }));
  EXPECT_EQ(starts.load(), 1);
}

TEST(Registry, RegisterLookupAutoUnregister) {
  thread_pool pool({.threads = 2});
  auto a = spawn_process(pool, waits_then, 0);
  EXPECT_TRUE(register_name("svc", a));
  EXPECT_FALSE(register_name("svc", spawn_process(pool, waits_then, 0))) << "name taken";
  auto found = whereis<int>("svc");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, a);
  EXPECT_FALSE(whereis<std::string>("svc").has_value()) << "wrong message type";
  send(*found, 1);
  ASSERT_TRUE(eventually([&] { return !whereis_pid("svc").has_value(); }));
  EXPECT_FALSE(register_name("dead", a));
  auto b = spawn_process(pool, waits_then, 0);
  EXPECT_TRUE(register_name("svc", b));
  EXPECT_TRUE(unregister_name("svc"));
  EXPECT_FALSE(unregister_name("svc"));
  kill(b);
}

process<int> slow_consumer(std::atomic<int>* consumed, int total) {
  for (int i = 0; i < total; ++i) {
    (void)co_await saturn::receive();
    ++*consumed;
    if (i % 64 == 0)
      co_await saturn::yield();
  }
}

long rss_kib() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE) / 1024;
}

TEST(Bounded, FastProducerWaitsAndMemoryStaysBounded) {
  thread_pool pool({.threads = 2});
  constexpr int total = 200000, cap = 32;
  std::atomic<int> consumed{0};
  auto c = spawn_process(pool, spawn_options{.mailbox_capacity = cap}, slow_consumer, &consumed, total);
  std::atomic<int> max_backlog{0};
  const long before = rss_kib();
  pool.block_on([&]() -> task<> {
    for (int i = 0; i < total; ++i) {
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
      // g++ does not make symmetric transfer a tail call in sanitizer builds, so a run of
      // send_waits that complete at once nests stack frames; a real suspension unwinds them.
      if (i % 512 == 511)
        co_await saturn::yield();
#endif
      const bool ok = co_await send_wait(c, i);
      EXPECT_TRUE(ok);
      // Oracle: never more than `cap` queued plus the one being taken (+ this send).
      const int backlog = i + 1 - consumed.load();
      if (backlog > max_backlog)
        max_backlog = backlog;
    }
  }());
  ASSERT_TRUE(eventually([&] { return consumed.load() == total; }));
  EXPECT_LE(max_backlog.load(), cap + 2);
#if !defined(SATURN_ASAN) && !defined(SATURN_TSAN)  // sanitizers quarantine freed memory
  // 200,000 unconsumed 32-byte nodes would be ~6 MiB; a bounded run stays far below.
  EXPECT_LT(rss_kib() - before, 3 * 1024);
#else
  (void)before;
#endif
}

TEST(Bounded, SendersToADeadProcessAreReleased) {
  thread_pool pool({.threads = 2});
  auto c = spawn_process(pool, spawn_options{.mailbox_capacity = 1}, waits_then, 0);
  std::atomic<int> delivered{0}, dropped{0};
  pool.block_on([&]() -> task<> {
    // First fills the mailbox and ends the process (it returns after one message); the
    // rest wait or are refused, but none hangs.
    for (int i = 0; i < 10; ++i) {
      if (co_await send_wait(c, i))
        ++delivered;
      else
        ++dropped;
    }
  }());
  EXPECT_GE(delivered.load(), 1);
  EXPECT_EQ(delivered + dropped, 10);
}

TEST(Scale, MillionProcessesSpawnAndExitMemoryReturned) {
#if defined(SATURN_ASAN) || defined(SATURN_TSAN)
  GTEST_SKIP() << "1,000,000 processes under a sanitizer take minutes; covered in release";
#else
  const long start = rss_kib();
  long after_first = 0, after_second = 0;
  {
    thread_pool pool({.threads = 2});
    constexpr int n = 1'000'000;
    // One pid vector for both rounds: an 8 MB vector freed and allocated again lands in
    // the heap the second time (glibc raises its mmap threshold after the first free),
    // which is the test's own growth, not saturn's.
    std::vector<pid_of<int>> ps;
    ps.reserve(n);
    auto round = [&]() {
      std::atomic<int> exited{0};
      ps.clear();
      auto body = [](std::atomic<int>* ex) -> process<int> {
        (void)co_await saturn::receive();
        ex->fetch_add(1, std::memory_order_relaxed);
      };
      for (int i = 0; i < n; ++i)
        ps.push_back(spawn_process(pool, body, &exited));
      for (auto& p : ps)
        send(p, 1);
      EXPECT_TRUE(eventually([&] { return exited.load() == n; }));
      EXPECT_TRUE(eventually([&] {
        for (auto& p : ps)
          if (alive(p))
            return false;
        return true;
      }));
    };
    round();
    after_first = rss_kib();
    round();
    after_second = rss_kib();
  }
  // Frames and slots are kept by their allocators for reuse (not returned to the OS), so
  // the second million must fit in what the first left: memory is returned to saturn.
  // The slack (10% of the first round) covers the free-pid vector's growth and glibc
  // arena fragmentation; a leak of even one frame per process would be ~200 MB.
  EXPECT_LT(after_second - after_first, (after_first - start) / 10) << "start " << start << " first " << after_first;
  // With the pool gone, its workers' free frames sit in the global pool: trimming gives
  // every fully free chunk back to the kernel. What stays is the pid table (32 bytes a
  // slot, kept for the generation counters that make stale pids safe) and malloc's caches.
  const std::size_t released = saturn::trim_task_memory();
  // malloc's own free memory (the exited workers' arenas: about 14 MB in one run in four
  // or five, as much in the commit before as after) is malloc's to keep, not saturn's:
  // give it back too, so what is left is what saturn keeps.
  ::malloc_trim(0);
  const long trimmed = rss_kib();
  std::fprintf(stderr, "# RSS KiB: start %ld, after 1M %ld, after 2M %ld, after trim %ld (%zu KiB released)\n", start,
               after_first, after_second, trimmed, released / 1024);
  EXPECT_GT(released, 0u);
  // Bounded by what is kept by design, not by a fraction of the peak (smaller frames, as
  // clang makes them, lower the peak but not the pid table): the table plus 32 MiB for
  // partly used chunks. A frame per process kept would be ~150 MB. Measured on the 2-CPU
  // VM (16 runs, malloc trimmed): two modes, 39-41 MB and 53-56 MB above the start; the
  // earlier 24 MiB allowance (55.8 MB in all) failed about one run in four, at the commit
  // before this bound's change as well.
  const long pid_table_kib = 32L * 1'000'000 / 1024;
  EXPECT_LT(trimmed - start, pid_table_kib + 32 * 1024) << "memory not returned near the start";
#endif
}

TEST(Links, KillIsUntrappableButItsReasonIsTrappable) {
  thread_pool pool({.threads = 2});
  // kill() ends the victim although it traps exits; the watcher, linked to it and
  // trapping too, is not killed in turn: it gets an exit message with reason killed.
  auto trapping_victim = [](std::atomic<bool>* ready) -> process<watcher_msg> {
    auto self = co_await this_process;
    self.trap_exits();
    *ready = true;
    for (;;)
      (void)co_await self.receive();
  };
  std::atomic<bool> ready{false};
  auto v = spawn_process(pool, trapping_victim, &ready);
  ASSERT_TRUE(eventually([&] { return ready.load(); }));
  box out;
  (void)spawn_process(pool, watcher, std::vector<pid>{}, std::vector<pid>{v}, 1, &out);
  ASSERT_TRUE(eventually([&] { return out.ready.load(); }));
  kill(v);
  ASSERT_TRUE(eventually([&] { return out.done.load(); }));
  EXPECT_FALSE(alive(v));
  ASSERT_EQ(out.exits.size(), 1u);
  EXPECT_EQ(out.exits[0].from, pid(v));
  EXPECT_EQ(out.exits[0].reason.kind, exit_kind::killed);
}

TEST(Supervisor, SurvivesAKilledChild) {
  thread_pool pool({.threads = 2});
  std::atomic<int> starts{0};
  std::mutex m;
  pid current;
  bool have_current = false;  // guarded by m: `starts` counts up before the pid is stored
  auto sup = start_supervisor(pool, {{"w", [&] {
                                        ++starts;
                                        auto p = spawn_process(pool, waits_then, 0);
                                        std::lock_guard l(m);
                                        current = p;
                                        have_current = true;
                                        return pid(p);
                                      }}});
  ASSERT_TRUE(eventually([&] {
    std::lock_guard l(m);
    return have_current;
  }));
  ASSERT_EQ(starts.load(), 1);
  pid c;
  {
    std::lock_guard l(m);
    c = current;
  }
  kill(c);
  ASSERT_TRUE(eventually([&] { return starts.load() == 2; }));
  EXPECT_TRUE(alive(sup));
  send(sup, supervisor_stop{});
  ASSERT_TRUE(eventually([&] { return !alive(sup); }));
}

}  // namespace
