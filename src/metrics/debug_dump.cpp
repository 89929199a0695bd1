// render_debug_dump and signal_dumper: the task dump as text, and a thread that waits for
// a blocked signal (sigtimedwait, so its destructor can stop it) and writes the dump.
#include <saturn/metrics/debug_dump.hpp>
#include <saturn/proc/proc_stats.hpp>
#include <saturn/proc/registry.hpp>

#include <pthread.h>
#include <signal.h>

#include <saturn/detail/atomic.hpp>

#include <algorithm>
#include <cstdio>
#include <thread>

namespace saturn::metrics {

std::string render_debug_dump(const task_dump_options& opts) {
  std::string s = render_task_dump(dump_tasks(opts));
  const proc_stats ps = process_stats();
  char line[160];
  std::snprintf(line, sizeof line, "saturn processes: %llu alive, %llu supervisor restarts\n",
                static_cast<unsigned long long>(ps.alive), static_cast<unsigned long long>(ps.supervisor_restarts));
  s.append(line);
  // The names the task lines' <index.generation> pids are registered under.
  auto names = registered_names();
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [name, p] : names) {
    std::snprintf(line, sizeof line, "registered <%u.%u> ", p.index, p.generation);
    s.append(line).append(name).push_back('\n');
  }
  return s;
}

struct signal_dumper::state {
  sigset_t set{};
  saturn::detail::atomic<bool> stop{false};
  saturn::detail::atomic<unsigned long> dumps{0};
  std::thread thread;
};

signal_dumper::signal_dumper(int sig) : m_state(std::make_unique<state>()) {
  sigemptyset(&m_state->set);
  sigaddset(&m_state->set, sig);
  pthread_sigmask(SIG_BLOCK, &m_state->set, nullptr);
  m_state->thread = std::thread([s = m_state.get()] {
    const timespec tick{0, 100'000'000};
    while (!s->stop.load(std::memory_order_relaxed)) {
      if (sigtimedwait(&s->set, nullptr, &tick) > 0) {
        const std::string text = render_debug_dump();
        std::fwrite(text.data(), 1, text.size(), stderr);
        std::fflush(stderr);
        s->dumps.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
}

signal_dumper::~signal_dumper() {
  m_state->stop.store(true, std::memory_order_relaxed);
  m_state->thread.join();
}

unsigned long signal_dumper::dumps() const noexcept {
  return m_state->dumps.load(std::memory_order_relaxed);
}

}  // namespace saturn::metrics
