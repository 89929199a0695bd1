// Helpers the task tests share: the root context to spawn under, byte views of a string,
// cancellation checks, and the children the combinator tests (when_all, when_any,
// task_group) run. One copy here, so the module's files can be compiled together in a
// unity batch (tests/CMakeLists.txt) without two definitions of one name.
#pragma once

#include <saturn/saturn.hpp>

#include <chrono>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>

namespace task_test {

/// The scheduler's root context of the calling task. Loop thread.
inline saturn::task<saturn::task_context*> root_ctx() {
  saturn::task_context& ctx = co_await saturn::this_task::context();
  co_return &ctx.sched->root_context();
}

/// `s`'s characters as writable bytes (for read/write buffers).
inline std::span<std::byte> bytes(std::string& s) {
  return std::as_writable_bytes(std::span<char>(s.data(), s.size()));
}

/// True when `r` failed with operation_canceled.
inline bool is_canceled(const saturn::result<void>& r) {
  return !r && r.err() == std::errc::operation_canceled;
}

/// Sleeps `d`; `cancelled` is set only once the sleep has ended with operation_canceled
/// (then -1), else `value`.
inline saturn::task<int> sleeper(std::chrono::nanoseconds d, bool& cancelled, int value) {
  auto r = co_await saturn::sleep_for(d);
  if (is_canceled(r)) {
    cancelled = true;
    co_return -1;
  }
  co_return value;
}

/// Yields `n` times.
inline saturn::task<> yield_n(int n) {
  for (int i = 0; i < n; ++i)
    co_await saturn::yield();
}

/// What a child of the combinator tests throws: carries the child's index.
struct child_error : std::runtime_error {
  std::size_t index;
  explicit child_error(std::size_t i) : std::runtime_error("child " + std::to_string(i) + " failed"), index(i) {}
};

/// How a child of the randomized combinator tests ended, as logged.
enum class outcome { ok, failed, cancelled };
struct logged {
  std::size_t index;
  outcome what;
};

}  // namespace task_test
