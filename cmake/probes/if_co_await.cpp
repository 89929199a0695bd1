// Configure-time probe (cmake/saturn-co-await-checks.cmake): does this compiler run a coroutine
// whose body declares no local variable and has co_await in an `if` condition? g++ 12.2
// (Debian 12's) does not: resuming it runs nothing of the body. Exit 0: compiled right.
#include <coroutine>

namespace {
int g_stage = 0;

struct ready_awaiter {
  bool await_ready() noexcept { return true; }
  void await_suspend(std::coroutine_handle<>) noexcept {}
  bool await_resume() noexcept { return true; }
};

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

probe_task body() {
  g_stage = 1;
  if (co_await ready_awaiter{})
    g_stage = 2;
}
}  // namespace

int main() {
  probe_task t = body();
  t.h.resume();
  const bool ok = g_stage == 2 && t.h.done();
  t.h.destroy();
  return ok ? 0 : 1;
}
