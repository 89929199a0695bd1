/// \file
/// `wait_result`: what a wait on a sync primitive gives back — ok, or the error that ended
/// it (operation_canceled when the task's stop token stopped it; broken_pipe when a
/// channel was closed under a sender). It reads like `result<void>` and converts to it.
///
/// Why not `result<void>` itself: that is 24 bytes (an error_code and an operation name),
/// and g++ 12 keeps an await's result in the coroutine frame even when the result is
/// discarded. A wait can only end a few known ways, so one byte names the outcome and a
/// static table holds the full `error`. Every task waiting on an event, latch, semaphore,
/// wait group or channel send is smaller for it (docs/decisions/task-frame-size.md).
///
/// ```
/// if (auto r = co_await ev.wait(); !r)
///   log(r.err().message());   // "event::wait: Operation canceled"
/// result<void> same = co_await ev.wait();  // converts
/// ```
#pragma once

#include <saturn/result.hpp>

#include <cstdint>
#include <system_error>

namespace saturn {

/// The sync operations whose waits end in a wait_result.
enum class wait_op : std::uint8_t {
  event_wait,
  latch_wait,
  wait_group_wait,
  semaphore_acquire,
  channel_send,
};

/// How a sync wait ended, in one byte. Threading: a plain value type.
class [[nodiscard]] wait_result {
 public:
  /// Success.
  constexpr wait_result() noexcept = default;
  /// The wait `op` was stopped by its task's stop token (std::errc::operation_canceled).
  static constexpr wait_result canceled(wait_op op) noexcept { return wait_result(code_of(op, 0)); }
  /// The primitive `op` waited on was closed (std::errc::broken_pipe).
  static constexpr wait_result closed(wait_op op) noexcept { return wait_result(code_of(op, 1)); }

  bool has_value() const noexcept { return m_code == 0; }
  explicit operator bool() const noexcept { return has_value(); }
  /// Nothing on success; throws std::system_error (with the operation's name) otherwise.
  void value() const {
    if (!has_value())
      throw std::system_error(err().code, err().operation);
  }
  /// The error; an empty error (no code, operation "") on success.
  const error& err() const noexcept;
  std::error_code code() const noexcept { return err().code; }
  /// The same outcome as a result<void>.
  operator result<void>() const noexcept {
    if (has_value())
      return {};
    return err();
  }

 private:
  static constexpr std::uint8_t code_of(wait_op op, unsigned closed) noexcept {
    return static_cast<std::uint8_t>(1 + 2 * static_cast<unsigned>(op) + closed);
  }
  constexpr explicit wait_result(std::uint8_t code) noexcept : m_code(code) {}
  std::uint8_t m_code = 0;  ///< 0: ok; else 1 + 2 * op + (closed ? 1 : 0)
};

}  // namespace saturn
