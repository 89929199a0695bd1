// Route matching: routes without parameters compare the whole path at once; the others
// walk the path one segment at a time (a final `{*name}` takes whatever is left). Linear in the number of routes (servers here have
// a handful; a trie would be the next step for hundreds). The rare answers' helpers
// (recognized methods, the Allow list) and the percent-decoding of paths that contain '%'
// are here too.
#include <saturn/http/router.hpp>
#include <saturn/http/middleware.hpp>

#include "http/chars.hpp"

#include <array>
#include <stdexcept>

namespace saturn::http {

void router::add(std::string_view method, std::string_view pattern, handler fn, route_options opts) {
  if (pattern.empty() || pattern.front() != '/')
    throw std::invalid_argument("router::add: a pattern must start with '/': " + std::string(pattern));
  if (opts.stream_body && opts.window < 4096)
    throw std::invalid_argument("router::add: a streamed body's window must be at least 4096 bytes: " +
                                std::string(pattern));
  route r{std::string(method), std::string(pattern), {}, true, std::move(fn), opts};
  std::string_view rest = pattern.substr(1);
  std::size_t params = 0;
  for (;;) {
    std::size_t slash = rest.find('/');
    std::string_view seg = rest.substr(0, slash);
    if (seg.size() >= 2 && seg.front() == '{' && seg.back() == '}') {
      if (++params > route_params::max_params)
        throw std::invalid_argument("router::add: too many parameters in " + std::string(pattern));
      const bool rest_of_path = seg.size() >= 3 && seg[1] == '*';
      if (rest_of_path && slash != std::string_view::npos)
        throw std::invalid_argument("router::add: a {*name} catch-all must be the last segment: " +
                                    std::string(pattern));
      std::string_view name = seg.substr(rest_of_path ? 2 : 1, seg.size() - (rest_of_path ? 3 : 2));
      if (rest_of_path && (name.empty() || name.find_first_of("{}*") != std::string_view::npos))
        throw std::invalid_argument("router::add: a catch-all needs a plain name: " + std::string(pattern));
      r.segments.push_back({std::string(name), true, rest_of_path});
      r.literal = false;
    } else {
      if (seg.find_first_of("{}") != std::string_view::npos)
        throw std::invalid_argument("router::add: a parameter must be a whole segment: " + std::string(pattern));
      r.segments.push_back({std::string(seg), false, false});
    }
    if (slash == std::string_view::npos)
      break;
    rest.remove_prefix(slash + 1);
  }
  for (const middleware& m : m_wrappers)
    r.fn = http::wrap(std::move(r.fn), m);
  m_streams = m_streams || opts.stream_body;
  m_routes.push_back(std::move(r));
}

void router::wrap(middleware m) {
  for (route& r : m_routes)
    r.fn = http::wrap(std::move(r.fn), m);
  if (m_otherwise)
    m_otherwise = http::wrap(std::move(m_otherwise), m);
  m_wrappers.push_back(std::move(m));
}

void router::otherwise(std::function<bool(const request&)> accepts, handler fn, route_options opts) {
  for (const middleware& m : m_wrappers)
    fn = http::wrap(std::move(fn), m);
  m_otherwise_accepts = std::move(accepts);
  m_otherwise = std::move(fn);
  m_otherwise_opts = opts;
}

const handler* router::otherwise_for(const request& req, const route_options** opts) const {
  if (!m_otherwise || !m_otherwise_accepts || !m_otherwise_accepts(req))
    return nullptr;
  *opts = &m_otherwise_opts;
  return &m_otherwise;
}

bool router::match_route(const route& r, std::string_view path, route_params& out) const noexcept {
  if (r.literal)
    return path == r.pattern;
  if (path.empty() || path.front() != '/')
    return false;
  std::string_view rest = path.substr(1);
  out.m_count = 0;
  for (std::size_t i = 0; i < r.segments.size(); ++i) {
    const segment& s = r.segments[i];
    if (s.rest) [[unlikely]] {  // the last segment: everything left, '/' and empty included
      out.m_slots[out.m_count++] = {s.text.data(), s.text.size(), rest.data(), rest.size()};
      return true;
    }
    std::size_t slash = rest.find('/');
    bool last = i + 1 == r.segments.size();
    if (last != (slash == std::string_view::npos))
      return false;
    std::string_view seg = rest.substr(0, slash);
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
      m.options = &r.opts;
      m.status = 200;
      m.route = static_cast<unsigned>(&r - m_routes.data());
      return m;
    }
    m.status = 405;
  }
  m.params.m_count = 0;
  if (!recognizes(method))
    m.status = 501;
  return m;
}

bool router::recognizes(std::string_view method) const noexcept {
  static constexpr std::array<std::string_view, 9> standard = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                                               "CONNECT", "OPTIONS", "TRACE", "PATCH"};
  for (std::string_view s : standard)
    if (s == method)
      return true;
  for (const route& r : m_routes)
    if (r.method == method)
      return true;
  return false;
}

namespace {

/// Appends `m` to the comma-separated `list` unless it is there already.
void add_method(std::string& list, std::string_view m) {
  std::string_view rest = list;
  while (!rest.empty()) {
    std::size_t c = rest.find(", ");
    if (rest.substr(0, c) == m)
      return;
    rest = c == std::string_view::npos ? std::string_view() : rest.substr(c + 2);
  }
  if (!list.empty())
    list += ", ";
  list += m;
}

}  // namespace

std::string router::allowed_methods(std::string_view path) const {
  std::string list;
  const bool server_wide = path == "*";
  route_params scratch;
  for (const route& r : m_routes) {
    if (!server_wide && !match_route(r, path, scratch))
      continue;
    add_method(list, r.method);
    if (r.method == "GET")
      add_method(list, "HEAD");
  }
  if (server_wide)
    add_method(list, "OPTIONS");
  return list;
}

namespace detail {

std::string_view normalize_escaped_path(std::string_view path, std::string& scratch) {
  auto upper = [](char c) { return c >= 'a' && c <= 'f' ? static_cast<char>(c - 'a' + 'A') : c; };
  scratch.clear();
  scratch.reserve(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '%' && i + 2 < path.size() && is(path[i + 1], c_hex) && is(path[i + 2], c_hex)) {
      char d = static_cast<char>(hex_value(path[i + 1]) * 16 + hex_value(path[i + 2]));
      if (is(d, c_unreserved)) {
        scratch.push_back(d);
      } else {
        scratch.push_back('%');
        scratch.push_back(upper(path[i + 1]));
        scratch.push_back(upper(path[i + 2]));
      }
      i += 2;
    } else {
      scratch.push_back(c);
    }
  }
  return scratch;
}

}  // namespace detail

}  // namespace saturn::http
