// Multi-threaded send stress: processes on every worker and plain threads all send to
// each other at once; every message must arrive exactly once and in per-sender order.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace saturn;
using proc_test::eventually;

namespace {

struct stamped {
  std::uint32_t sender;
  std::uint32_t seq;
};
using mesh_msg = std::variant<stamped, std::vector<pid>>;

struct mesh_state {
  std::atomic<long> received{0};
  std::atomic<long> order_errors{0};
  std::atomic<int> finished{0};
};

constexpr std::uint32_t k_external = 2;  // plain threads sending too

process<mesh_msg> mesh_node(std::uint32_t id, std::uint32_t procs, std::uint32_t per_peer, mesh_state* st) {
  auto self = co_await this_process;
  // First the peer list (selective: messages from faster peers may already be queued).
  mesh_msg first = co_await self.receive([](const mesh_msg& m) { return m.index() == 1; });
  std::vector<pid> peers = std::get<std::vector<pid>>(first);
  std::vector<std::uint32_t> next_seq(procs + k_external, 0);
  std::mt19937 rng(id);
  const long expect = static_cast<long>(procs + k_external - 1) * per_peer;  // from everyone else
  std::vector<std::uint32_t> sent(procs, 0);
  long got = 0;
  std::uint32_t to_send = (procs - 1) * per_peer;
  while (got < expect || to_send > 0) {
    // Interleave: send a burst, then take what has arrived.
    for (int b = 0; b < 8 && to_send > 0; ++b) {
      std::uint32_t dst;
      do {
        dst = static_cast<std::uint32_t>(rng() % procs);
      } while (dst == id || sent[dst] == per_peer);
      send(pid_of<mesh_msg>::unchecked(peers[dst]), stamped{id, sent[dst]++});
      --to_send;
    }
    if (got < expect) {
      auto m = co_await self.receive_for(std::chrono::milliseconds(to_send > 0 ? 0 : 5000));
      if (!m)
        continue;
      const stamped s = std::get<stamped>(*m);
      if (s.seq != next_seq[s.sender])
        st->order_errors.fetch_add(1);
      next_seq[s.sender] = s.seq + 1;
      ++got;
      st->received.fetch_add(1, std::memory_order_relaxed);
    }
  }
  st->finished.fetch_add(1);
}

TEST(Stress, MeshOfProcessesAndThreadsSendConcurrently) {
  thread_pool pool({.threads = 2});
  constexpr std::uint32_t procs = 16, per_peer = 2000;
  mesh_state st;
  std::vector<pid> ps;
  for (std::uint32_t i = 0; i < procs; ++i)
    ps.push_back(spawn_process(pool, mesh_node, i, procs, per_peer, &st));
  for (auto& p : ps)
    send(pid_of<mesh_msg>::unchecked(p), ps);
  std::vector<std::thread> ext;
  for (std::uint32_t t = 0; t < k_external; ++t)
    ext.emplace_back([&, t] {
      std::vector<std::uint32_t> seq(procs, 0);
      for (std::uint32_t k = 0; k < per_peer; ++k)
        for (std::uint32_t d = 0; d < procs; ++d)
          send(pid_of<mesh_msg>::unchecked(ps[d]), stamped{procs + t, seq[d]++});
    });
  for (auto& t : ext)
    t.join();
  ASSERT_TRUE(eventually([&] { return st.finished.load() == int(procs); }, std::chrono::seconds(60)));
  EXPECT_EQ(st.received.load(), long(procs) * (procs + k_external - 1) * per_peer);
  EXPECT_EQ(st.order_errors.load(), 0);
  EXPECT_TRUE(eventually([&] {
    for (auto& p : ps)
      if (alive(p))
        return false;
    return true;
  }));
}

}  // namespace
