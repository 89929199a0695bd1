// The free saturn::spawn / saturn::spawn_on on the single-threaded runtime: a task
// spawns siblings on its own runtime (join values and exceptions), the children get the
// root context (not the caller's stop token), detached children run to their end,
// spawn_on accepts worker 0 only, and a thread without a scheduler gets a logic_error;
// every refused task is destroyed unstarted.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::join_handle;
using saturn::task;

/// Sets *destroyed when the frame holding it goes; *started when the task body ran.
struct spawn_probe {
  std::shared_ptr<int> destroyed_marker;
};

task<int> spawned_probe(spawn_probe p, bool* started) {
  *started = true;
  (void)p;
  co_return 1;
}

task<int> square(int x) {
  co_await saturn::yield();  // joined while it is still running, sometimes
  co_return x * x;
}

task<int> thrower() {
  co_await saturn::yield();
  throw std::runtime_error("child failed");
}

/// The context the running task has.
task<saturn::task_context*> my_context() {
  saturn::task_context& ctx = co_await saturn::this_task::context();
  co_return &ctx;
}

}  // namespace

TEST(task_free_spawn, spawned_children_run_on_the_callers_runtime_and_join_values) {
  saturn::runtime rt;
  const int sum = rt.block_on([](saturn::runtime* r) -> task<int> {
    std::vector<join_handle<int>> hs;
    for (int i = 0; i < 100; ++i)
      hs.push_back(saturn::spawn(square(i)));
    EXPECT_EQ(r->live_tasks(), 0u);  // only queued: none has run yet
    auto where = saturn::spawn(my_context());
    saturn::task_context* child = co_await std::move(where);
    EXPECT_EQ(child->sched, r);
    EXPECT_EQ(child, &r->root_context());
    int s = 0;
    for (auto& h : hs)
      s += co_await std::move(h);
    co_return s;
  }(&rt));
  EXPECT_EQ(sum, 328350);  // sum of i^2, i < 100
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_free_spawn, a_childs_exception_reaches_the_joiner) {
  saturn::runtime rt;
  const std::string what = rt.block_on([]() -> task<std::string> {
    auto h = saturn::spawn(thrower());
    try {
      (void)co_await std::move(h);
    } catch (const std::runtime_error& e) {
      co_return e.what();
    }
    co_return "no exception";
  }());
  EXPECT_EQ(what, "child failed");
}

// The caller runs under a context whose stop was already requested; its spawned child
// gets the runtime's root context, which no stop reaches.
TEST(task_free_spawn, children_do_not_inherit_the_callers_stop_token) {
  saturn::runtime rt;
  std::stop_source stop;
  stop.request_stop();
  saturn::task_context stopped = rt.root_context();
  stopped.token = stop.get_token();
  bool child_stop_possible = true;
  bool child_slept = false;
  rt.block_on([](saturn::task_context* ctx, bool* possible, bool* slept) -> task<> {
    auto parent = saturn::spawn_in(*ctx, [](bool* p, bool* s) -> task<> {
      saturn::task_context* mine = co_await my_context();
      EXPECT_TRUE(mine->token.stop_requested());  // the test's premise
      auto child = saturn::spawn([](bool* pp, bool* ss) -> task<> {
        saturn::task_context* c = co_await my_context();
        *pp = c->token.stop_possible();
        auto r = co_await saturn::sleep_for(1ms);  // a stopped token would cancel this
        *ss = r.has_value();
      }(p, s));
      co_await std::move(child);
    }(possible, slept));
    co_await std::move(parent);
  }(&stopped, &child_stop_possible, &child_slept));
  EXPECT_FALSE(child_stop_possible);
  EXPECT_TRUE(child_slept);
}

TEST(task_free_spawn, detached_children_run_to_their_end) {
  saturn::runtime rt;
  int finished = 0;
  rt.block_on([](saturn::runtime* r, int* done) -> task<> {
    for (int i = 0; i < 50; ++i)
      saturn::spawn([](int* d, int k) -> task<> {
        (void)co_await saturn::sleep_for(std::chrono::microseconds(10 * (k % 7)));
        ++*d;
      }(done, i)).detach();
    // dropping the handle detaches too
    (void)saturn::spawn([](int* d) -> task<> {
      ++*d;
      co_return;
    }(done));
    const auto until = saturn::clock::now() + 10s;
    while (r->live_tasks() != 0 || *done != 51) {
      if (saturn::clock::now() > until)
        break;
      (void)co_await saturn::sleep_for(100us);
    }
  }(&rt, &finished));
  EXPECT_EQ(finished, 51);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_free_spawn, spawn_on_worker_zero_runs_and_other_workers_throw) {
  saturn::runtime rt;
  auto marker = std::make_shared<int>(0);
  bool started = false;
  std::string error;
  const int v = rt.block_on([](spawn_probe p, bool* s, std::string* err) -> task<int> {
    auto h = saturn::spawn_on(0, square(7));
    try {
      (void)saturn::spawn_on(1, spawned_probe(p, s));
    } catch (const std::out_of_range& e) {
      *err = e.what();
    }
    co_return co_await std::move(h);
  }(spawn_probe{marker}, &started, &error));
  EXPECT_EQ(v, 49);
  EXPECT_NE(error.find("worker 1 does not exist"), std::string::npos) << error;
  EXPECT_FALSE(started) << "a refused task ran";
  EXPECT_EQ(marker.use_count(), 1) << "the refused task's frame was not destroyed";
}

// The thread that created a runtime has it as its scheduler even outside block_on: a
// spawn there is queued and runs in the next block_on.
TEST(task_free_spawn, the_runtimes_own_thread_may_spawn_outside_block_on) {
  saturn::runtime rt;
  auto h = saturn::spawn(square(9));
  const int v = rt.block_on([](join_handle<int> j) -> task<int> { co_return co_await std::move(j); }(std::move(h)));
  EXPECT_EQ(v, 81);
}

TEST(task_free_spawn, a_thread_without_a_scheduler_gets_a_logic_error) {
  auto marker = std::make_shared<int>(0);
  bool started = false;
  std::string spawn_error, spawn_on_error;
  std::thread([&] {
    try {
      (void)saturn::spawn(spawned_probe(spawn_probe{marker}, &started));
    } catch (const std::logic_error& e) {
      spawn_error = e.what();
    }
    try {
      (void)saturn::spawn_on(0, spawned_probe(spawn_probe{marker}, &started));
    } catch (const std::logic_error& e) {
      spawn_on_error = e.what();
    }
  }).join();
  EXPECT_NE(spawn_error.find("saturn::spawn: the calling thread runs no saturn scheduler"), std::string::npos)
      << spawn_error;
  EXPECT_NE(spawn_error.find("pool.spawn(t)"), std::string::npos) << spawn_error;
  EXPECT_NE(spawn_on_error.find("saturn::spawn_on:"), std::string::npos) << spawn_on_error;
  EXPECT_FALSE(started);
  EXPECT_EQ(marker.use_count(), 1) << "a refused task's frame was not destroyed";
}
