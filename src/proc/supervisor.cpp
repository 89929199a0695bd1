// The one_for_one supervisor: a process that traps exits, links to its children and
// restarts them; it gives up (ending with reason shutdown, which its links carry to the
// remaining children) after more than `intensity` restarts within `period`.
#include <saturn/proc/send.hpp>
#include <saturn/proc/spawn.hpp>
#include <saturn/proc/supervisor.hpp>

#include <deque>

#include "proc/proc_counters.hpp"

namespace saturn {
namespace {

struct child_state {
  child_spec spec;
  pid current{};
};

bool wants_restart(restart_policy p, const exit_reason& r) {
  switch (p) {
    case restart_policy::permanent:
      return true;
    case restart_policy::transient:
      return r.kind != exit_kind::normal && r.kind != exit_kind::shutdown;
    case restart_policy::temporary:
      return false;
  }
  return false;
}

[[noreturn]] void give_up() { throw process_exit(exit_reason{exit_kind::shutdown, nullptr}); }

process<supervisor_message> supervise(std::vector<child_spec> specs, supervisor_options opts) {
  auto self = co_await this_process;
  self.trap_exits();
  std::vector<child_state> children;
  children.reserve(specs.size());
  for (auto& s : specs) {
    child_state c{std::move(s), {}};
    c.current = c.spec.start();
    self.link(c.current);
    children.push_back(std::move(c));
  }
  std::deque<clock::time_point> restarts;
  for (;;) {
    supervisor_message m = co_await self.receive();
    if (std::holds_alternative<supervisor_stop>(m))
      give_up();
    const exit_message& e = std::get<exit_message>(m);
    auto it = std::find_if(children.begin(), children.end(), [&](const child_state& c) { return c.current == e.from; });
    if (it == children.end()) {
      if (!e.reason.is_normal())
        throw process_exit(e.reason);  // a linked non-child (our parent) failed
      continue;
    }
    if (!wants_restart(it->spec.restart, e.reason)) {
      it->current = pid{};
      continue;
    }
    const auto now = clock::now();
    restarts.push_back(now);
    while (!restarts.empty() && now - restarts.front() > opts.period)
      restarts.pop_front();
    if (restarts.size() > opts.intensity) {
      detail::g_supervisor_give_ups.fetch_add(1, std::memory_order_relaxed);
      give_up();
    }
    detail::g_supervisor_restarts.fetch_add(1, std::memory_order_relaxed);
    it->current = it->spec.start();
    self.link(it->current);
  }
}

}  // namespace

pid_of<supervisor_message> start_supervisor(scheduler& s, std::vector<child_spec> children,
                                            supervisor_options options) {
  return spawn_process(s, &supervise, std::move(children), options);
}

}  // namespace saturn
