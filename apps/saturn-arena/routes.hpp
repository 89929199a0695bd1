// saturn-arena's configuration, the data it loads at start, and its routes.
#pragma once

#include <saturn/http/compression.hpp>
#include <saturn/http/router.hpp>

#include "dataset.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace arena {

/// What the command line sets.
struct config {
  std::string data_dir = "/data";
  /// /upload takes HttpArena's 20 MB bodies with room to spare; it streams them, so a
  /// connection holds one 64 KiB window of a body, not the body.
  std::size_t max_body = std::size_t{64} << 20;
  saturn::http::compression_options compression{};
};

/// What the routes read (loaded once at start, read-only afterwards: any worker).
struct state {
  config cfg;
  std::vector<item> items;
  bool have_static = false;
};

/// Loads dataset.json and looks for static/; false after saying on stderr what is missing
/// (the server still starts: HttpArena mounts only what a profile needs). Main thread.
bool load(const config& cfg, state& st);

/// Adds every endpoint; `st` must outlive the router's use.
void add_routes(saturn::http::router& routes, const state& st);

}  // namespace arena
