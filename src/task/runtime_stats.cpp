// live_runtime_stats: the list of live runtimes (registered at the end of construction,
// removed first thing in destruction, under one mutex taken only then and by readers,
// the task dump among them), and the snapshot of each.
#include <saturn/task/runtime.hpp>
#include <saturn/task/runtime_stats.hpp>

#include <algorithm>
#include <mutex>

namespace saturn {
namespace detail {
namespace {

struct runtime_list {
  std::mutex mutex;
  std::vector<const runtime*> runtimes;
  unsigned next_id = 0;
};

runtime_list& runtimes() {
  static runtime_list* l = new runtime_list;  // lifetime: never destroyed (runtimes may outlive statics)
  return *l;
}

}  // namespace

void install_runtime_dumper() noexcept;  // src/task/runtime_dump.cpp

void with_live_runtimes(void (*f)(runtime&, void*), void* ctx) {
  runtime_list& l = runtimes();
  // lifetime: a runtime leaves the list before its destructor touches its loop or tasks.
  std::lock_guard lock(l.mutex);
  for (const runtime* rt : l.runtimes)
    f(*const_cast<runtime*>(rt), ctx);
}

unsigned register_runtime_stats(const runtime& rt) {
  install_runtime_dumper();  // the task dump lists runtimes from now on
  runtime_list& l = runtimes();
  std::lock_guard lock(l.mutex);
  l.runtimes.push_back(&rt);
  return l.next_id++;
}

void unregister_runtime_stats(const runtime& rt) noexcept {
  runtime_list& l = runtimes();
  std::lock_guard lock(l.mutex);
  std::erase(l.runtimes, &rt);
}

}  // namespace detail

std::vector<runtime_stats> live_runtime_stats() {
  detail::runtime_list& l = detail::runtimes();
  std::vector<runtime_stats> out;
  // lifetime: a runtime leaves the list before its destructor touches its loop, so every
  // runtime read here stays alive while the lock is held.
  std::lock_guard lock(l.mutex);
  out.reserve(l.runtimes.size());
  for (const runtime* rt : l.runtimes)
    out.push_back(runtime_stats{rt->stats_id(), rt->live_task_count(), rt->loop_stats_snapshot()});
  return out;
}

}  // namespace saturn
