/// \file
/// A small supervisor (Erlang's one_for_one): starts child processes, links to them, and
/// restarts a child that ends (per its restart policy). More than `intensity` restarts
/// within `period` means something is persistently wrong: the supervisor then gives up
/// and ends with reason shutdown, which (through the links) ends its remaining children.
///
/// ```
/// auto sup = saturn::start_supervisor(pool, {
///     {"worker", [&] { return saturn::spawn_process(pool, worker_body); }},
/// }, {.intensity = 3, .period = std::chrono::seconds(5)});
/// ```
#pragma once

#include <saturn/proc/process.hpp>
#include <saturn/task/scheduler.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace saturn {

/// When a child that ended is restarted.
enum class restart_policy {
  permanent,  ///< always
  transient,  ///< only if it ended abnormally (not normal, not shutdown)
  temporary,  ///< never
};

/// How to start one child.
struct child_spec {
  std::string id;
  /// Spawns the child and returns its pid; called on the supervisor's thread, again for
  /// every restart. It must not block.
  std::function<pid()> start;
  restart_policy restart = restart_policy::permanent;
};

/// Restart intensity: at most `intensity` restarts in any window of `period`.
struct supervisor_options {
  unsigned intensity = 3;
  std::chrono::milliseconds period{5000};
};

/// Asks a supervisor to stop: it ends with reason shutdown, and its children with it.
struct supervisor_stop {};

/// What a supervisor receives.
using supervisor_message = std::variant<exit_message, supervisor_stop>;

/// Spawns a supervisor process on `s` that starts `children` in order (any thread).
/// Monitor it to learn when it gives up.
pid_of<supervisor_message> start_supervisor(scheduler& s, std::vector<child_spec> children,
                                            supervisor_options options = {});

}  // namespace saturn
