/// \file
/// `metrics::registry`: the named metrics of a program, and the collectors that add
/// samples computed at scrape time (saturn's runtime statistics are one).
///
///     auto& reg = saturn::metrics::registry::global();
///     saturn::metrics::counter& done = reg.counter("myapp_jobs_total", "Jobs finished", {{"queue", "a"}});
///     saturn::metrics::gauge& depth = reg.gauge("myapp_queue_depth", "Jobs waiting", {{"queue", "a"}});
///     saturn::metrics::histogram& took = reg.histogram("myapp_job_seconds", "Job run time", {0.001, 0.01, 0.1, 1});
///     done.inc();
///     depth.set(3);
///     took.observe(0.02);
///
/// Names follow Prometheus: a metric name matches `[a-zA-Z_:][a-zA-Z0-9_:]*`, a label
/// name `[a-zA-Z_][a-zA-Z0-9_]*` and does not begin with "__" (a histogram's labels may
/// not include "le"); label values are any UTF-8 (escaped when rendered).
#pragma once

#include <saturn/metrics/counter.hpp>
#include <saturn/metrics/gauge.hpp>
#include <saturn/metrics/histogram.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace saturn::metrics {

/// Label names and values, in the order they are rendered.
using label_set = std::vector<std::pair<std::string, std::string>>;

/// The Prometheus type of a metric family.
enum class metric_type { counter, gauge, histogram };

/// Where a collector writes its samples at render time: one family (HELP and TYPE) and
/// then its samples, family after family. Threading: used only inside the collector call
/// it was passed to.
class sample_sink {
 public:
  /// Begins family `name`. Throws std::invalid_argument for an invalid name. A family must
  /// not be begun twice in one render, nor share a name with a registered metric.
  void family(std::string_view name, std::string_view help, metric_type type);
  /// A sample of the current family: `name` is the family's name, or for a histogram the
  /// family's name with _bucket / _sum / _count.
  void sample(std::string_view name, const label_set& labels, double value);
  void sample(std::string_view name, const label_set& labels, std::uint64_t value);

 private:
  friend class registry;
  explicit sample_sink(std::string& out) noexcept : m_out(out) {}
  std::string& m_out;
};

/// A function that writes samples computed at render time (see registry::add_collector).
using collector = std::function<void(sample_sink&)>;

/// See the file comment.
///
/// Threading: every member from any thread. Registering takes the registry's lock (do it
/// at startup, or cache the reference: the metric lives as long as the registry and its
/// address never changes); updating a metric takes no lock (counter.hpp, gauge.hpp,
/// histogram.hpp); rendering takes the lock and calls the collectors under it.
class registry {
 public:
  registry();
  ~registry();
  registry(const registry&) = delete;
  registry& operator=(const registry&) = delete;

  /// The process's registry: what metrics::render() renders and saturn's own metrics
  /// (the runtime collector, the HTTP server's counters) live in. Never destroyed.
  static registry& global();

  /// The counter `name` with `labels`, made on the first call and the same object on every
  /// later call with the same name and labels. Throws std::invalid_argument (naming the
  /// problem) for an invalid metric or label name, or a name registered as another type.
  class counter& counter(std::string_view name, std::string_view help, const label_set& labels = {});
  /// As counter(), for a gauge.
  class gauge& gauge(std::string_view name, std::string_view help, const label_set& labels = {});
  /// As counter(), for a histogram with `bounds` (finite, strictly ascending, 1 to 500 of
  /// them; +Inf is added). Also throws std::invalid_argument when the family exists with
  /// other bounds.
  class histogram& histogram(std::string_view name, std::string_view help, std::vector<double> bounds,
                             const label_set& labels = {});

  /// Adds a collector called by every render, after the registered metrics; it stays
  /// until the returned handle is destroyed. It runs under the registry's lock, on the
  /// rendering thread: it must not register metrics or render.
  class collector_handle {
   public:
    collector_handle() = default;
    collector_handle(collector_handle&& o) noexcept : m_reg(std::exchange(o.m_reg, nullptr)), m_id(o.m_id) {}
    collector_handle& operator=(collector_handle&& o) noexcept;
    ~collector_handle();

   private:
    friend class registry;
    collector_handle(registry* r, std::uint64_t id) noexcept : m_reg(r), m_id(id) {}
    registry* m_reg = nullptr;
    std::uint64_t m_id = 0;
  };
  [[nodiscard]] collector_handle add_collector(collector fn);

  /// The Prometheus text exposition (format 0.0.4) of every metric and collector: families
  /// sorted by name, each with # HELP and # TYPE, then the collectors' families. Any thread;
  /// takes the lock; allocates.
  std::string render() const;

 private:
  struct series;
  struct family;
  family& family_for(std::string_view name, std::string_view help, metric_type type, const label_set& labels);
  void remove_collector(std::uint64_t id) noexcept;

  mutable std::mutex m_mutex;
  std::map<std::string, std::unique_ptr<family>, std::less<>> m_families;
  std::vector<std::pair<std::uint64_t, collector>> m_collectors;
  std::uint64_t m_next_collector = 1;
};

/// True when `name` is a valid metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`).
bool valid_metric_name(std::string_view name) noexcept;
/// True when `name` is a valid label name (`[a-zA-Z_][a-zA-Z0-9_]*`, not "__" first).
bool valid_label_name(std::string_view name) noexcept;

}  // namespace saturn::metrics
