// The errors behind a wait_result's one byte (see saturn/sync/wait_result.hpp).
#include <saturn/sync/wait_result.hpp>

#include <array>

namespace saturn {

const error& wait_result::err() const noexcept {
  // Indexed by m_code: 0 success, then per wait_op (in enum order) canceled and closed.
  static const std::array<error, 11> table{{
      {},
      {std::make_error_code(std::errc::operation_canceled), "event::wait"},
      {std::make_error_code(std::errc::broken_pipe), "event::wait: closed"},
      {std::make_error_code(std::errc::operation_canceled), "latch::wait"},
      {std::make_error_code(std::errc::broken_pipe), "latch::wait: closed"},
      {std::make_error_code(std::errc::operation_canceled), "wait_group::wait"},
      {std::make_error_code(std::errc::broken_pipe), "wait_group::wait: closed"},
      {std::make_error_code(std::errc::operation_canceled), "semaphore::acquire"},
      {std::make_error_code(std::errc::broken_pipe), "semaphore::acquire: closed"},
      {std::make_error_code(std::errc::operation_canceled), "channel::send"},
      {std::make_error_code(std::errc::broken_pipe), "channel::send: channel closed"},
  }};
  static_assert(code_of(wait_op::channel_send, 1) + 1 == table.size(), "one canceled and one closed entry per wait_op");
  return table[m_code];
}

}  // namespace saturn
