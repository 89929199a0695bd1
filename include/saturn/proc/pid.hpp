/// \file
/// Process identifiers and the reasons a process ends.
///
/// A `pid` names a process by a slot index and a generation; the slot is reused after the
/// process ends, with the generation bumped, so a stale pid never reaches a newer process
/// (sending to it is a no-op, alive() says false). `pid_of<Msg>` is a pid that also
/// records the process's message type, so send() can check it at compile time.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

namespace saturn {

/// Names a process. A plain value (8 bytes): copy it, store it, send it in messages.
///
/// Threading: any thread. A default-constructed pid names no process.
struct pid {
  std::uint32_t index = ~std::uint32_t{0};
  std::uint32_t generation = 0;

  /// True when the pid was produced by a spawn (it may still name a dead process).
  bool valid() const noexcept { return generation != 0; }
  friend bool operator==(const pid&, const pid&) noexcept = default;
};

/// A pid whose process receives messages of type `Msg`.
template <class Msg>
struct pid_of : pid {
  using message_type = Msg;
  pid_of() noexcept = default;
  /// Types an untyped pid. Unchecked: the caller asserts that the process receives Msg.
  static pid_of unchecked(pid p) noexcept {
    pid_of r;
    static_cast<pid&>(r) = p;
    return r;
  }
};

/// Why a process ended.
enum class exit_kind : std::uint8_t {
  normal,    ///< its body returned
  error,     ///< its body threw (error() holds the exception)
  killed,    ///< kill(): untrappable
  noproc,    ///< the linked / monitored process did not exist any more
  shutdown,  ///< asked to stop (e.g. by its supervisor), or a supervisor gave up
};
/// (A process ended by a linked process's exit signal ends with that signal's reason,
/// as in Erlang.)

/// The reason a process ended; carried by exit and down messages.
struct exit_reason {
  exit_kind kind = exit_kind::normal;
  std::exception_ptr error{};  ///< set for exit_kind::error (and linked, when the origin threw)

  bool is_normal() const noexcept { return kind == exit_kind::normal; }
  /// A short human-readable text ("normal", "error: <what()>", ...).
  std::string describe() const;
};

/// Thrown inside a process by receive() when an exit signal ends it (a linked process
/// failed and this one does not trap exits, or kill()); may also be thrown by a process
/// to end itself with a chosen reason. Do not swallow it: the process is meant to end.
class process_exit : public std::exception {
 public:
  explicit process_exit(exit_reason r) noexcept : m_reason(std::move(r)) {}
  const exit_reason& reason() const noexcept { return m_reason; }
  const char* what() const noexcept override { return "saturn: process exit signal"; }

 private:
  exit_reason m_reason;
};

/// Delivered to a process that traps exits when a linked process ends (any reason,
/// including normal). The process's message type must be constructible from it.
struct exit_message {
  pid from;
  exit_reason reason;
};

/// Identifies one monitor (returned by monitor(), carried by its down message).
using monitor_ref = std::uint64_t;

/// Delivered to a monitoring process when the monitored process ends (exactly once per
/// monitor). The process's message type must be constructible from it.
struct down_message {
  monitor_ref ref = 0;
  pid from;
  exit_reason reason;
};

}  // namespace saturn

template <>
struct std::hash<saturn::pid> {
  std::size_t operator()(const saturn::pid& p) const noexcept {
    return std::hash<std::uint64_t>{}((std::uint64_t{p.generation} << 32) | p.index);
  }
};
