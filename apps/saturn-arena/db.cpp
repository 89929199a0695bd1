#include "db.hpp"

#include <saturn/pg/connection.hpp>

#include "item_json.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <limits>

namespace arena {

namespace {

namespace pg = saturn::pg;
using saturn::task;
using saturn::http::request;
using saturn::http::response;

// Statements (static storage: a pool query views its text until it completes). Each is
// prepared once per connection by the pool's connections.
constexpr const char* sql_async_db =
    "SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count"
    " FROM items WHERE price BETWEEN $1 AND $2 LIMIT $3";
constexpr const char* sql_list =
    "SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count"
    " FROM items WHERE category = $1 ORDER BY id LIMIT $2 OFFSET $3";
constexpr const char* sql_read =
    "SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count"
    " FROM items WHERE id = $1";
constexpr const char* sql_upsert =
    "INSERT INTO items (id, name, category, price, quantity, active, tags, rating_score, rating_count)"
    " VALUES ($1, $2, $3, $4, $5, true, '[]', 0, 0) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name,"
    " category = EXCLUDED.category, price = EXCLUDED.price, quantity = EXCLUDED.quantity";
constexpr const char* sql_update = "UPDATE items SET name = $1, price = $2, quantity = $3 WHERE id = $4";

response json_error(int status, std::string_view message) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("error");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  w.EndObject();
  return response::json(status, std::string(buf.GetString(), buf.GetSize()));
}

response no_database() {
  return json_error(503, "no database configured: start saturn-arena with DATABASE_URL or --database-url");
}

/// The answer to a failed database call: 503 when the database is unreachable, busy,
/// shutting down or too slow (retrying later may work), 400 when the server refused the
/// request's data (SQLSTATE classes 22 and 23), 500 otherwise.
response db_failure(const pg::error& e) {
  if (e.kind == pg::errc::cancelled)
    return json_error(503, "the database did not answer in time");
  if (e.kind == pg::errc::server) {
    const std::string_view cls = std::string_view(e.sqlstate).substr(0, 2);
    if (cls == "22" || cls == "23")
      return json_error(400, "the database refused the data: " + e.message);
    if (cls == "08" || cls == "53" || cls == "57")
      return json_error(503, "database unavailable: " + e.message);
    return json_error(500, "query failed: " + e.what());
  }
  if (e.kind == pg::errc::type || e.kind == pg::errc::null || e.kind == pg::errc::misuse)
    return json_error(500, "query failed: " + e.what());
  return json_error(503, "database unavailable: " + e.what());
}

/// A query parameter read as an integer, `fallback` when absent; nullopt after setting
/// `bad` to a 400 answer when present but not an integer.
std::optional<std::int64_t> int_param(const request& req, std::string_view name, std::int64_t fallback,
                                      std::optional<response>& bad) {
  auto q = req.query();
  if (!q.has(name))
    return fallback;
  auto v = q.get<std::int64_t>(name);
  if (!v) {
    bad = json_error(400, q.describe(name, v.err()));
    return std::nullopt;
  }
  return *v;
}

/// The {id} of /crud/items/{id}: nullopt with `bad` set (400) unless it is an integer.
/// An id outside the INTEGER column's range names no item: 404.
std::optional<std::int32_t> item_id(const request& req, std::optional<response>& bad) {
  auto id = req.params().get<std::int64_t>("id");
  if (!id) {
    bad = json_error(400, req.params().describe("id", id.err()));
    return std::nullopt;
  }
  if (*id < std::numeric_limits<std::int32_t>::min() || *id > std::numeric_limits<std::int32_t>::max()) {
    bad = json_error(404, "no item with id " + std::to_string(*id));
    return std::nullopt;
  }
  return static_cast<std::int32_t>(*id);
}

// async-db: the price range query; limit clamped to 1-50 (HttpArena's defaults 10, 50, 50).
task<response> async_db(const request& req, database& db) {
  if (!db.pool)
    co_return no_database();
  std::optional<response> bad;
  auto min = int_param(req, "min", 10, bad);
  auto max = int_param(req, "max", 50, bad);
  auto limit = int_param(req, "limit", 50, bad);
  if (bad)
    co_return std::move(*bad);
  const std::int64_t n = std::clamp<std::int64_t>(*limit, 1, 50);
  auto rows = co_await pg::with_deadline(db.timeout, db.pool->query(sql_async_db, *min, *max, n));
  if (!rows)
    co_return db_failure(rows.err());
  std::string why;
  auto body = render_items_count(*rows, why);
  if (!body)
    co_return json_error(500, why);
  co_return response::json(200, std::move(*body));
}

// crud list: one page of a category, by id; limit clamped to 1-50, page from 1.
task<response> crud_list(const request& req, database& db) {
  if (!db.pool)
    co_return no_database();
  std::optional<response> bad;
  auto page = int_param(req, "page", 1, bad);
  auto limit = int_param(req, "limit", 10, bad);
  if (bad)
    co_return std::move(*bad);
  if (*page < 1 || *page > 1'000'000'000)
    co_return json_error(400, "query parameter \"page\" must be between 1 and 1000000000");
  const std::int64_t n = std::clamp<std::int64_t>(*limit, 1, 50);
  const std::int64_t offset = (*page - 1) * n;
  auto category = req.query().get_or("category", "electronics");
  auto rows = co_await pg::with_deadline(db.timeout, db.pool->query(sql_list, category.view(), n, offset));
  if (!rows)
    co_return db_failure(rows.err());
  std::string why;
  auto body = render_items_page(*rows, *page, n, why);
  if (!body)
    co_return json_error(500, why);
  co_return response::json(200, std::move(*body));
}

// crud read: cache-aside, 200 ms from the fill (absolute), X-Cache says which.
task<response> crud_read(const request& req, database& db) {
  if (!db.pool)
    co_return no_database();
  std::optional<response> bad;
  auto id = item_id(req, bad);
  if (!id)
    co_return std::move(*bad);
  if (auto hit = db.cache.get(*id)) {
    response r = response::with_shared_body(200, "application/json", std::move(hit));
    r.add_header("X-Cache", "HIT");
    co_return r;
  }
  const std::uint64_t gen = db.cache.generation(*id);
  auto rows = co_await pg::with_deadline(db.timeout, db.pool->query(sql_read, *id));
  if (!rows)
    co_return db_failure(rows.err());
  if (rows->empty())
    co_return json_error(404, "no item with id " + std::to_string(*id));
  std::string why;
  auto body = render_item((*rows)[0], why);
  if (!body)
    co_return json_error(500, why);
  auto shared = std::make_shared<const std::string>(std::move(*body));
  db.cache.put(*id, shared, gen);
  response r = response::with_shared_body(200, "application/json", std::move(shared));
  r.add_header("X-Cache", "MISS");
  co_return r;
}

// crud create: an upsert; the item's cached copy (if any) is dropped once it is written.
task<response> crud_create(const request& req, database& db) {
  if (!db.pool)
    co_return no_database();
  std::string why;
  auto in = parse_item_input(req.body().view(), true, why);
  if (!in)
    co_return json_error(400, why);
  auto done = co_await pg::with_deadline(
      db.timeout, db.pool->query(sql_upsert, in->id, in->name, in->category, in->price, in->quantity));
  if (!done)
    co_return db_failure(done.err());
  db.cache.invalidate(in->id);
  co_return response::json(201, render_written(*in, true));
}

// crud update: name, price and quantity; 404 when no row has the id; the cached copy is
// dropped after the update committed.
task<response> crud_update(const request& req, database& db) {
  if (!db.pool)
    co_return no_database();
  std::optional<response> bad;
  auto id = item_id(req, bad);
  if (!id)
    co_return std::move(*bad);
  std::string why;
  auto in = parse_item_input(req.body().view(), false, why);
  if (!in)
    co_return json_error(400, why);
  in->id = *id;
  auto done =
      co_await pg::with_deadline(db.timeout, db.pool->query(sql_update, in->name, in->price, in->quantity, *id));
  if (!done)
    co_return db_failure(done.err());
  if (done->affected() == 0)
    co_return json_error(404, "no item with id " + std::to_string(*id));
  db.cache.invalidate(*id);
  co_return response::json(200, render_written(*in, false));
}

}  // namespace

bool database::open(const std::string& url, std::size_t max_conn, std::string& why) {
  auto cfg = pg::config::parse(url);
  if (!cfg) {
    why = cfg.err().what();
    return false;
  }
  // A stalled server: the request's answer waits for the cancel of its query, so that
  // is bounded by the request's timeout too (the connection is then dropped).
  cfg->connect_timeout = std::min(cfg->connect_timeout, timeout);
  cfg->cancel_timeout = std::min(cfg->cancel_timeout, timeout);
  pool = std::make_unique<pg::pool>(std::move(*cfg), pg::pool_options{.max_size = max_conn});
  return true;
}

void add_db_routes(saturn::http::router& routes, database& db) {
  routes.get("/async-db", [&db](const request& req) { return async_db(req, db); });
  routes.get("/crud/items", [&db](const request& req) { return crud_list(req, db); });
  routes.get("/crud/items/{id}", [&db](const request& req) { return crud_read(req, db); });
  routes.post("/crud/items", [&db](const request& req) { return crud_create(req, db); });
  routes.put("/crud/items/{id}", [&db](const request& req) { return crud_update(req, db); });
}

}  // namespace arena
