// The processes scenario (scenarios.hpp): a supervisor under random kills, crashes and
// link storms, and a client whose every answer must be right.
#include "sim/scenarios.hpp"

#include <saturn/proc.hpp>
#include <saturn/sync.hpp>
#include <saturn/task.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace saturn::sim_scenarios {
namespace {

using namespace std::chrono_literals;

[[noreturn]] void proc_fail(const std::string& what) { throw std::runtime_error("proc scenario: " + what); }

struct ask {
  int n;
  pid_of<int> reply_to;
};

/// Squares; crashes on a negative number.
process<ask> squarer() {
  auto self = co_await this_process;
  for (;;) {
    ask a = co_await self.receive();
    if (a.n < 0)
      throw std::invalid_argument("negative");
    send(a.reply_to, a.n * a.n);
  }
}

std::string child_name(int k) { return "sim.squarer." + std::to_string(k); }

/// A process that links `left` children to itself and then crashes: the whole group dies.
process<int> storm(int left) {
  auto self = co_await this_process;
  for (int i = 0; i < left; ++i) {
    auto c = spawn_process([]() -> process<int> {
      auto me = co_await this_process;
      (void)co_await me.receive();  // waits until the link takes it down
    });
    self.link(c);
  }
  (void)co_await self.receive_for(std::chrono::microseconds(left * 10));
  throw std::runtime_error("storm");
}

/// Kills supervised children and starts link storms at seed-chosen times.
process<int> chaos(sim::world* w, int children, int rounds) {
  auto self = co_await this_process;
  for (int i = 0; i < rounds; ++i) {
    (void)co_await self.receive_for(std::chrono::microseconds(w->random_below(400)));
    if (w->random_below(3) == 0) {
      (void)spawn_process(storm, 1 + static_cast<int>(w->random_below(12)));
    } else if (auto p = whereis_pid(child_name(static_cast<int>(w->random_below(static_cast<std::uint64_t>(children)))))) {
      kill(*p);
    }
  }
}

/// Asks each child for squares; retries while a child is down. A negative number crashes
/// the child and gets no answer; every answer that comes must be the right one.
process<int> client(sim::world* w, int children, int questions, event* done, int* answered) {
  auto self = co_await this_process;
  for (int q = 0; q < questions; ++q) {
    const bool poison = w->random_below(8) == 0;
    const int n = poison ? -1 : static_cast<int>(w->random_below(1000));
    const std::string name = child_name(static_cast<int>(w->random_below(static_cast<std::uint64_t>(children))));
    bool got = false;
    for (int attempt = 0; attempt < 200 && !got; ++attempt) {
      auto p = whereis<ask>(name);
      if (!p) {
        (void)co_await self.receive_for(50us);  // being restarted
        continue;
      }
      send(*p, ask{n, self.pid()});
      auto answer = co_await self.receive_for(1ms);
      if (!answer) {
        if (poison)
          break;  // it crashed, as it should
        continue;  // killed meanwhile: ask its successor
      }
      if (poison)
        proc_fail("an answer to a question that crashes the child");
      // An answer may be a late one to an earlier attempt at a different number? No: one
      // question is in flight at a time and each gets at most one answer, but a late
      // answer to this question's earlier attempt is the same square.
      if (*answer != n * n)
        proc_fail("wrong answer " + std::to_string(*answer) + " for " + std::to_string(n));
      got = true;
    }
    if (!poison && !got)
      proc_fail("no answer for " + std::to_string(n) + " from " + name + " in 200 attempts");
    if (got)
      ++*answered;
    // Drop late answers before the next question.
    while (auto late = co_await self.receive_for(0ns))
      if (*late != n * n)
        proc_fail("a late answer " + std::to_string(*late) + " does not belong to " + std::to_string(n));
  }
  done->set();
}

}  // namespace

task<void> proc_scenario(sim::world& w) {
  scheduler* sched = scheduler::current();
  const int children = 1 + static_cast<int>(w.random_below(4));
  std::vector<child_spec> specs;
  for (int k = 0; k < children; ++k)
    specs.push_back({child_name(k), [k] {
                       auto p = spawn_process(squarer);
                       register_name(child_name(k), p);
                       return pid(p);
                     }});
  auto sup = start_supervisor(*sched, std::move(specs), {.intensity = 100000, .period = 1000ms});
  event done;
  int answered = 0;
  (void)spawn_process(chaos, &w, children, 5 + static_cast<int>(w.random_below(20)));
  (void)spawn_process(client, &w, children, 10 + static_cast<int>(w.random_below(20)), &done, &answered);
  auto r = co_await done.wait();
  (void)r;
  send(sup, supervisor_stop{});
  // Every process ends: the supervisor takes its children down, and the names go.
  for (int i = 0; i < 1000 && !registered_names().empty(); ++i)
    co_await sleep_for(100us);
  if (!registered_names().empty())
    proc_fail(std::to_string(registered_names().size()) + " name(s) still registered after the supervisor stopped");
  if (answered == 0)
    proc_fail("no question was answered");
}

}  // namespace saturn::sim_scenarios
