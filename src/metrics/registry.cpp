// registry: families by name (sorted, so renders are stable), their series by label set,
// name validation, and the collectors.
#include <saturn/metrics/registry.hpp>
#include <saturn/metrics/render.hpp>

#include <cmath>
#include <stdexcept>

#include "metrics/runtime_collector.hpp"

namespace saturn::metrics {

struct registry::series {
  label_set labels;
  std::unique_ptr<class counter> c;
  std::unique_ptr<class gauge> g;
  std::unique_ptr<class histogram> h;
};

struct registry::family {
  std::string help;
  metric_type type;
  std::vector<double> bounds;  // histograms
  std::vector<std::unique_ptr<series>> items;
  series* find(const label_set& labels) const {
    for (auto& s : items)
      if (s->labels == labels)
        return s.get();
    return nullptr;
  }
};

namespace {

bool name_char(char c, bool first, bool colon) noexcept {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

const char* type_name(metric_type t) noexcept {
  switch (t) {
    case metric_type::counter: return "counter";
    case metric_type::gauge: return "gauge";
    case metric_type::histogram: return "histogram";
  }
  return "untyped";
}

void check_labels(std::string_view metric, const label_set& labels, bool histogram) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& n = labels[i].first;
    if (!valid_label_name(n))
      throw std::invalid_argument("saturn::metrics: '" + std::string(metric) + "': invalid label name '" + n +
                                  "' (want [a-zA-Z_][a-zA-Z0-9_]*, not beginning with __)");
    if (histogram && n == "le")
      throw std::invalid_argument("saturn::metrics: histogram '" + std::string(metric) +
                                  "' may not have a label 'le' (its buckets use it)");
    for (std::size_t j = 0; j < i; ++j)
      if (labels[j].first == n)
        throw std::invalid_argument("saturn::metrics: '" + std::string(metric) + "': label '" + n + "' given twice");
  }
}

void write_labels(std::string& out, const label_set& labels, const char* le = nullptr) {
  if (labels.empty() && le == nullptr)
    return;
  out += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first)
      out += ',';
    first = false;
    out += k;
    out += "=\"";
    out += escape_label_value(v);
    out += '"';
  }
  if (le != nullptr) {
    if (!first)
      out += ',';
    out += "le=\"";
    out += le;
    out += '"';
  }
  out += '}';
}

void write_head(std::string& out, std::string_view name, std::string_view help, metric_type type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += escape_help(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type_name(type);
  out += '\n';
}

}  // namespace

bool valid_metric_name(std::string_view name) noexcept {
  if (name.empty())
    return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (!name_char(name[i], i == 0, true))
      return false;
  return true;
}

bool valid_label_name(std::string_view name) noexcept {
  if (name.empty() || name.starts_with("__"))
    return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (!name_char(name[i], i == 0, false))
      return false;
  return true;
}

registry::registry() = default;
registry::~registry() = default;

registry& registry::global() {
  // lifetime: never destroyed; metrics may be updated by threads that outlive main().
  static registry* r = [] {
    auto* reg = new registry;
    static collector_handle runtime = reg->add_collector(detail::runtime_collector());
    return reg;
  }();
  return *r;
}

registry::family& registry::family_for(std::string_view name, std::string_view help, metric_type type,
                                       const label_set& labels) {
  if (!valid_metric_name(name))
    throw std::invalid_argument("saturn::metrics: invalid metric name '" + std::string(name) +
                                "' (want [a-zA-Z_:][a-zA-Z0-9_:]*)");
  check_labels(name, labels, type == metric_type::histogram);
  auto it = m_families.find(name);
  if (it == m_families.end()) {
    auto f = std::make_unique<family>();
    f->help = std::string(help);
    f->type = type;
    it = m_families.emplace(std::string(name), std::move(f)).first;
  } else if (it->second->type != type) {
    throw std::invalid_argument("saturn::metrics: '" + std::string(name) + "' is already registered as a " +
                                type_name(it->second->type) + ", not a " + type_name(type));
  }
  return *it->second;
}

class counter& registry::counter(std::string_view name, std::string_view help, const label_set& labels) {
  std::lock_guard lock(m_mutex);
  family& f = family_for(name, help, metric_type::counter, labels);
  if (series* s = f.find(labels))
    return *s->c;
  auto s = std::make_unique<series>();
  s->labels = labels;
  s->c.reset(new class counter(detail::allocate_cells(1)));
  f.items.push_back(std::move(s));
  return *f.items.back()->c;
}

class gauge& registry::gauge(std::string_view name, std::string_view help, const label_set& labels) {
  std::lock_guard lock(m_mutex);
  family& f = family_for(name, help, metric_type::gauge, labels);
  if (series* s = f.find(labels))
    return *s->g;
  auto s = std::make_unique<series>();
  s->labels = labels;
  s->g.reset(new class gauge());
  f.items.push_back(std::move(s));
  return *f.items.back()->g;
}

class histogram& registry::histogram(std::string_view name, std::string_view help, std::vector<double> bounds,
                                     const label_set& labels) {
  if (bounds.empty() || bounds.size() > 500)
    throw std::invalid_argument("saturn::metrics: histogram '" + std::string(name) + "' needs 1 to 500 bounds");
  for (std::size_t i = 0; i < bounds.size(); ++i)
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i - 1] < bounds[i])))
      throw std::invalid_argument("saturn::metrics: histogram '" + std::string(name) +
                                  "': bounds must be finite and strictly ascending (+Inf is added)");
  std::lock_guard lock(m_mutex);
  family& f = family_for(name, help, metric_type::histogram, labels);
  if (f.items.empty())
    f.bounds = bounds;
  else if (f.bounds != bounds)
    throw std::invalid_argument("saturn::metrics: histogram '" + std::string(name) +
                                "' is already registered with other bounds");
  if (series* s = f.find(labels))
    return *s->h;
  const auto n = static_cast<std::uint32_t>(bounds.size());
  auto s = std::make_unique<series>();
  s->labels = labels;
  s->h.reset(new class histogram(std::move(bounds), detail::allocate_cells(n + 2, n + 1)));
  f.items.push_back(std::move(s));
  return *f.items.back()->h;
}

registry::collector_handle& registry::collector_handle::operator=(collector_handle&& o) noexcept {
  if (this != &o) {
    if (m_reg != nullptr)
      m_reg->remove_collector(m_id);
    m_reg = std::exchange(o.m_reg, nullptr);
    m_id = o.m_id;
  }
  return *this;
}

registry::collector_handle::~collector_handle() {
  if (m_reg != nullptr)
    m_reg->remove_collector(m_id);
}

registry::collector_handle registry::add_collector(collector fn) {
  std::lock_guard lock(m_mutex);
  const std::uint64_t id = m_next_collector++;
  m_collectors.emplace_back(id, std::move(fn));
  return collector_handle(this, id);
}

void registry::remove_collector(std::uint64_t id) noexcept {
  std::lock_guard lock(m_mutex);
  std::erase_if(m_collectors, [id](const auto& c) { return c.first == id; });
}

std::string registry::render() const {
  std::string out;
  std::lock_guard lock(m_mutex);
  for (const auto& [name, f] : m_families) {
    write_head(out, name, f->help, f->type);
    for (const auto& s : f->items) {
      if (s->c) {
        out += name;
        write_labels(out, s->labels);
        out += ' ';
        out += std::to_string(s->c->value());
        out += '\n';
      } else if (s->g) {
        out += name;
        write_labels(out, s->labels);
        out += ' ';
        out += format_value(s->g->value());
        out += '\n';
      } else {
        const auto snap = s->h->snapshot();
        for (std::size_t i = 0; i < snap.cumulative.size(); ++i) {
          const std::string le = i < f->bounds.size() ? format_value(f->bounds[i]) : std::string("+Inf");
          out += name;
          out += "_bucket";
          write_labels(out, s->labels, le.c_str());
          out += ' ';
          out += std::to_string(snap.cumulative[i]);
          out += '\n';
        }
        out += name;
        out += "_sum";
        write_labels(out, s->labels);
        out += ' ';
        out += format_value(snap.sum);
        out += '\n';
        out += name;
        out += "_count";
        write_labels(out, s->labels);
        out += ' ';
        out += std::to_string(snap.count);
        out += '\n';
      }
    }
  }
  sample_sink sink(out);
  for (const auto& c : m_collectors)
    c.second(sink);
  return out;
}

void sample_sink::family(std::string_view name, std::string_view help, metric_type type) {
  if (!valid_metric_name(name))
    throw std::invalid_argument("saturn::metrics: a collector's family has an invalid name '" + std::string(name) + "'");
  write_head(m_out, name, help, type);
}

void sample_sink::sample(std::string_view name, const label_set& labels, double value) {
  m_out += name;
  write_labels(m_out, labels);
  m_out += ' ';
  m_out += format_value(value);
  m_out += '\n';
}

void sample_sink::sample(std::string_view name, const label_set& labels, std::uint64_t value) {
  m_out += name;
  write_labels(m_out, labels);
  m_out += ' ';
  m_out += std::to_string(value);
  m_out += '\n';
}

}  // namespace saturn::metrics
