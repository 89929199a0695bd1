// Route matching: routes without parameters compare the whole path at once; the others
// walk the path one segment at a time. Linear in the number of routes (servers here have
// a handful; a trie would be the next step for hundreds).
#include <saturn/http/router.hpp>

#include <stdexcept>

namespace saturn::http {

void router::add(std::string_view method, std::string_view pattern, handler fn) {
  if (pattern.empty() || pattern.front() != '/')
    throw std::invalid_argument("router::add: a pattern must start with '/': " + std::string(pattern));
  route r{std::string(method), std::string(pattern), {}, true, std::move(fn)};
  std::string_view rest = pattern.substr(1);
  std::size_t params = 0;
  for (;;) {
    std::size_t slash = rest.find('/');
    std::string_view seg = rest.substr(0, slash);
    if (seg.size() >= 2 && seg.front() == '{' && seg.back() == '}') {
      if (++params > route_params::max_params)
        throw std::invalid_argument("router::add: too many parameters in " + std::string(pattern));
      r.segments.push_back({std::string(seg.substr(1, seg.size() - 2)), true});
      r.literal = false;
    } else {
      if (seg.find_first_of("{}") != std::string_view::npos)
        throw std::invalid_argument("router::add: a parameter must be a whole segment: " + std::string(pattern));
      r.segments.push_back({std::string(seg), false});
    }
    if (slash == std::string_view::npos)
      break;
    rest.remove_prefix(slash + 1);
  }
  m_routes.push_back(std::move(r));
}

bool router::match_route(const route& r, std::string_view path, route_params& out) const noexcept {
  if (r.literal)
    return path == r.pattern;
  if (path.empty() || path.front() != '/')
    return false;
  std::string_view rest = path.substr(1);
  out.m_count = 0;
  for (std::size_t i = 0; i < r.segments.size(); ++i) {
    std::size_t slash = rest.find('/');
    bool last = i + 1 == r.segments.size();
    if (last != (slash == std::string_view::npos))
      return false;
    std::string_view seg = rest.substr(0, slash);
    const segment& s = r.segments[i];
    if (s.param) {
      if (seg.empty())
        return false;
      out.m_slots[out.m_count++] = {s.text.data(), s.text.size(), seg.data(), seg.size()};
    } else if (seg != s.text) {
      return false;
    }
    if (!last)
      rest.remove_prefix(slash + 1);
  }
  return true;
}

route_match router::match(std::string_view method, std::string_view path) const noexcept {
  route_match m;
  for (const route& r : m_routes) {
    if (!match_route(r, path, m.params))
      continue;
    if (r.method == method || (method == "HEAD" && r.method == "GET")) {
      m.fn = &r.fn;
      m.status = 200;
      return m;
    }
    m.status = 405;
  }
  m.params.m_count = 0;
  return m;
}

}  // namespace saturn::http
