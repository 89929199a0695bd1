/// \file
/// The process registry: a name → pid map. A name is freed automatically when its
/// process ends.
///
/// ```
/// saturn::register_name("logger", logger_pid);
/// if (auto p = saturn::whereis<log_msg>("logger")) saturn::send(*p, log_msg{"started"});
/// ```
#pragma once

#include <saturn/proc/pid.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace saturn {
namespace detail {
/// A per-type tag (the address of a per-type static), so whereis<Msg> can refuse a name
/// registered for a process of another message type.
template <class Msg>
const void* message_type_tag() noexcept {
  static const char tag = 0;
  return &tag;
}
bool registry_add(std::string_view name, pid p, const void* type);
std::optional<std::pair<pid, const void*>> registry_find(std::string_view name);
}  // namespace detail

/// Registers `p` under `name`. False if the name is taken (by a live process) or `p` has
/// ended. A process may have several names. Any thread; takes a short lock.
template <class Msg>
bool register_name(std::string_view name, pid_of<Msg> p) {
  return detail::registry_add(name, p, detail::message_type_tag<Msg>());
}

/// The pid registered under `name`, if any (and if its process receives Msg). Any thread.
template <class Msg>
std::optional<pid_of<Msg>> whereis(std::string_view name) {
  auto e = detail::registry_find(name);
  if (!e || e->second != detail::message_type_tag<Msg>())
    return std::nullopt;
  return pid_of<Msg>::unchecked(e->first);
}

/// The pid registered under `name`, untyped (for alive, link, monitor, kill). Any thread.
std::optional<pid> whereis_pid(std::string_view name);

/// Removes `name`; false if it was not registered. Any thread.
bool unregister_name(std::string_view name);

/// Every registered name with its pid (Erlang's `registered()`), in no order; names of
/// processes that are ending may still be listed. Any thread; takes the registry's lock
/// for one copy of the map.
std::vector<std::pair<std::string, pid>> registered_names();

}  // namespace saturn
