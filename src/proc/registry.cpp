// The process registry: one map under a mutex (registration is rare next to sends).
// Automatic unregistration: registry_add marks the slot (slot_registered) before it
// checks, under the registry lock, that the process is alive; end_process bumps the
// generation before it reads the mark. Both seq_cst, so a name is never left behind.
#include <saturn/proc/detail/signals.hpp>
#include <saturn/proc/registry.hpp>

#include <mutex>
#include <string>
#include <unordered_map>

namespace saturn {
namespace detail {
namespace {

struct entry {
  pid p;
  const void* type;
};

struct registry {
  std::mutex lock;
  std::unordered_map<std::string, entry> names;
};

registry& reg() {
  static registry* r = new registry;  // lifetime: never destroyed (processes may end late)
  return *r;
}

}  // namespace

bool registry_add(std::string_view name, pid p, const void* type) {
  slot* s = slot_at(p.index);
  if (s == nullptr || !p.valid())
    return false;
  // ordering: seq_cst, see the top of this file.
  s->m_flags.fetch_or(slot_registered, std::memory_order_seq_cst);
  registry& r = reg();
  std::lock_guard lock(r.lock);
  if (s->m_gen.load(std::memory_order_seq_cst) != p.generation)
    return false;
  auto [it, inserted] = r.names.try_emplace(std::string(name), entry{p, type});
  if (!inserted) {
    if (pid_alive(it->second.p))
      return false;
    it->second = entry{p, type};  // the old owner is ending; its cleanup skips a reused name
  }
  return true;
}

std::optional<std::pair<pid, const void*>> registry_find(std::string_view name) {
  registry& r = reg();
  std::lock_guard lock(r.lock);
  auto it = r.names.find(std::string(name));
  if (it == r.names.end())
    return std::nullopt;
  return std::make_pair(it->second.p, it->second.type);
}

void registry_forget(pid p) noexcept {
  registry& r = reg();
  std::lock_guard lock(r.lock);
  for (auto it = r.names.begin(); it != r.names.end();) {
    if (it->second.p == p)
      it = r.names.erase(it);
    else
      ++it;
  }
}

}  // namespace detail

std::optional<pid> whereis_pid(std::string_view name) {
  auto e = detail::registry_find(name);
  if (!e)
    return std::nullopt;
  return e->first;
}

bool unregister_name(std::string_view name) {
  detail::registry& r = detail::reg();
  std::lock_guard lock(r.lock);
  return r.names.erase(std::string(name)) > 0;
}

std::vector<std::pair<std::string, pid>> registered_names() {
  detail::registry& r = detail::reg();
  std::vector<std::pair<std::string, pid>> out;
  std::lock_guard lock(r.lock);
  out.reserve(r.names.size());
  for (const auto& [name, e] : r.names)
    out.emplace_back(name, e.p);
  return out;
}

}  // namespace saturn
