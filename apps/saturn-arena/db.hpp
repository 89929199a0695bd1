// saturn-arena's database profiles (HttpArena's async-db and crud) over a saturn::pg pool:
//   GET /async-db?min=&max=&limit=   items with min <= price <= max, at most limit (1-50)
//   GET /crud/items?category=&page=&limit=   a page of a category's items, by id
//   GET /crud/items/{id}             one item, cached 200 ms (X-Cache: HIT | MISS), 404
//   POST /crud/items                 upsert from a JSON body, 201
//   PUT /crud/items/{id}             update name, price, quantity; drops the cached item; 404
// Without a database (no DATABASE_URL / --database-url) every one answers 503; a failed
// or timed-out query answers 503 too (bad input 400, a query the server refused 500).
// The pool connects lazily and heals (pg::pool), so the routes recover when the server
// is back.
#pragma once

#include <saturn/http/router.hpp>
#include <saturn/pg/pool.hpp>

#include "item_cache.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace arena {

/// What the database routes share. Threading: set up on the main thread before serving;
/// afterwards the pool and the cache are used from every worker (both are thread-safe).
struct database {
  /// Empty: no database configured.
  std::unique_ptr<saturn::pg::pool> pool;
  /// Bounds each request's database work (waiting for a connection, connecting, the
  /// query); past it the query is cancelled on the server and the answer is 503 (a
  /// stalled server: within about three times this, the cancel's own bounds included).
  std::chrono::milliseconds timeout{5000};
  item_cache cache{std::chrono::milliseconds(200)};

  /// Opens the pool for `url` (nothing connects yet) with `max_conn` connections (0:
  /// DATABASE_MAX_CONN, else pg's default); false with `why` set if `url` does not parse.
  bool open(const std::string& url, std::size_t max_conn, std::string& why);
};

/// Adds the routes above; `db` must outlive the router's use.
void add_db_routes(saturn::http::router& routes, database& db);

}  // namespace arena
