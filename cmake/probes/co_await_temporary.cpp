// Configure-time probe (cmake/saturn-co-await-checks.cmake): does this compiler destroy
// an aggregate built in a co_await operand exactly once? g++ 12.2 (Debian 12's) destroys
// it twice — `co_await take(counted{str})` with counted an aggregate holding a
// std::string is a double free —, and likewise the closure of a lambda with by-copy
// captures. Exit 0: each destroyed once; 1: the aggregate twice; 2: the closure twice.
#include <coroutine>
#include <utility>

namespace {
int g_live = 0;  // constructed minus destroyed `tracked` objects

struct tracked {
  tracked() noexcept { ++g_live; }
  tracked(const tracked&) noexcept { ++g_live; }
  tracked(tracked&&) noexcept { ++g_live; }
  tracked& operator=(const tracked&) = default;
  ~tracked() { --g_live; }
};

struct counted {  // an aggregate
  tracked t;
};

struct ready_awaiter {
  bool await_ready() noexcept { return true; }
  void await_suspend(std::coroutine_handle<>) noexcept {}
  int await_resume() noexcept { return 1; }
};

ready_awaiter take(counted) { return {}; }
template <class F>
ready_awaiter take_fn(F) {
  return {};
}

struct probe_task {
  struct promise_type {
    probe_task get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept {}
  };
  std::coroutine_handle<promise_type> h;
};

probe_task aggregate_operand(int& out) { out = co_await take(counted{tracked{}}); }

probe_task lambda_operand(int& out, const tracked& t) {
  out = co_await take_fn([t] { (void)t; });
}

bool runs_clean(probe_task t, const int& out) {
  t.h.resume();
  const bool done = t.h.done();
  t.h.destroy();
  return done && out == 1;
}
}  // namespace

int main() {
  int out = 0;
  if (!runs_clean(aggregate_operand(out), out) || g_live != 0)
    return 1;
  out = 0;
  {
    const tracked t;
    if (!runs_clean(lambda_operand(out, t), out))
      return 2;
  }
  return g_live == 0 ? 0 : 2;
}
