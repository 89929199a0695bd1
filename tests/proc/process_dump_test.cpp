// The task dump's process lines: a process body waiting in receive shows its pid, its
// mailbox depth (messages it skipped plus those not yet pulled), a bounded mailbox's
// capacity, its links and the monitors watching it; the debug dump names it.
#include <gtest/gtest.h>
#include <saturn/metrics/debug_dump.hpp>
#include <saturn/sched/task_dump.hpp>

#include <cstdio>
#include <string>
#include <variant>

#include "helpers.hpp"

using namespace saturn;
using proc_test::eventually;

namespace {

const task_entry* entry_of(const task_dump& d, pid p) {
  for (const auto& e : d.tasks)
    if (e.process.valid && e.process.index == p.index && e.process.generation == p.generation)
      return &e;
  return nullptr;
}

std::string pid_text(pid p) {
  char b[32];
  std::snprintf(b, sizeof b, "<%u.%u>", p.index, p.generation);  // (g++ 12 warns wrongly on "<" + to_string)
  return b;
}

}  // namespace

TEST(ProcessDump, ShowsPidMailboxLinksMonitorsAndName) {
  thread_pool pool({.threads = 2});
  // a skips everything but "stop"; b links to a and monitors it, then waits.
  auto a_body = []() -> process<std::string> {
    auto self = co_await this_process;
    (void)co_await self.receive([](const std::string& m) { return m == "stop"; });
  };
  const auto a = spawn_process(pool, {.mailbox_capacity = 16}, a_body);
  for (int i = 0; i < 3; ++i)
    send(a, std::string("skipped"));
  std::atomic<bool> watching{false};
  auto b_body = [](pid target, std::atomic<bool>* done) -> process<std::variant<std::string, down_message>> {
    auto self = co_await this_process;
    self.link(target);
    (void)self.monitor(target);
    done->store(true);
    (void)co_await self.receive([](const auto&) { return false; });
  };
  const auto b = spawn_process(pool, b_body, pid(a), &watching);
  ASSERT_TRUE(register_name("dump-test-a", a));
  ASSERT_TRUE(eventually([&] { return watching.load(); }));

  task_dump d;
  ASSERT_TRUE(eventually([&] {
    d = dump_tasks();
    const task_entry* ea = entry_of(d, a);
    const task_entry* eb = entry_of(d, b);
    return ea != nullptr && eb != nullptr && ea->process.in_receive && ea->process.mailbox == 3 &&
           eb->process.in_receive;
  })) << render_task_dump(d);
  const task_entry* ea = entry_of(d, a);
  const task_entry* eb = entry_of(d, b);
  EXPECT_EQ(ea->process.capacity, 16u);
  EXPECT_EQ(ea->process.links, 1u);
  EXPECT_EQ(ea->process.monitors, 1u);
  EXPECT_FALSE(ea->process.mailbox_capped);
  EXPECT_EQ(eb->process.links, 1u);
  EXPECT_EQ(eb->process.monitors, 0u);
  EXPECT_EQ(eb->process.mailbox, 0u);
  EXPECT_EQ(eb->process.capacity, 0u);
  EXPECT_EQ(d.unpaused_pools, 0u);

  const std::string text = render_task_dump(d);
  EXPECT_NE(text.find("process " + pid_text(a) + " in receive, mailbox 3 of 16, 1 link, 1 monitor"), std::string::npos)
      << text;
  EXPECT_NE(text.find("process " + pid_text(b) + " in receive, mailbox 0, 1 link, 0 monitors"), std::string::npos)
      << text;
  const std::string full = metrics::render_debug_dump();
  EXPECT_NE(full.find("registered " + pid_text(a) + " dump-test-a\n"), std::string::npos) << full;

  // The count stops at the limit and says so.
  task_dump_options small;
  small.mailbox_count_limit = 2;
  const task_dump capped = dump_tasks(small);
  const task_entry* ec = entry_of(capped, a);
  ASSERT_NE(ec, nullptr) << render_task_dump(capped);
  EXPECT_EQ(ec->process.mailbox, 2u);
  EXPECT_TRUE(ec->process.mailbox_capped);
  EXPECT_NE(render_task_dump(capped).find("mailbox over 2 of 16"), std::string::npos) << render_task_dump(capped);

  // Ordinary tasks carry no process facts.
  for (const auto& e : d.tasks) {
    if (e.task != ea->task && e.task != eb->task) {
      EXPECT_FALSE(e.process.valid);
    }
  }

  send(a, std::string("stop"));  // a ends normally; b (linked, a normal exit does not end it) stays
  EXPECT_TRUE(eventually([&] { return !alive(a); }));
  EXPECT_TRUE(alive(b));
}
