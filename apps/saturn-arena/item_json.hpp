// JSON of the database profiles, with rapidjson as for /json (docs/decisions/json.md):
// items rows written as HttpArena's item objects, and the crud request bodies read.
#pragma once

#include <saturn/pg/rows.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace arena {

/// The columns every item query selects, in the order write_item reads them.
inline constexpr std::string_view item_columns =
    "id, name, category, price, quantity, active, tags, rating_score, rating_count";

/// `{"items":[...],"count":n}` (async-db) for `rows` (item_columns); nullopt with `why`
/// when a column does not read as expected. Any thread.
std::optional<std::string> render_items_count(const saturn::pg::rows& rows, std::string& why);
/// `{"items":[...],"total":n,"page":page,"limit":limit}` (crud list).
std::optional<std::string> render_items_page(const saturn::pg::rows& rows, std::int64_t page, std::int64_t limit,
                                             std::string& why);
/// One item object (crud read).
std::optional<std::string> render_item(const saturn::pg::row& row, std::string& why);

/// A crud POST / PUT body. POST needs every field; PUT needs name, price and quantity
/// (id and category, if sent, are ignored there).
struct item_input {
  std::int32_t id = 0;
  std::string name, category;
  std::int32_t price = 0, quantity = 0;
};

/// Reads a JSON object body; nullopt with `why` (for a 400) if it is not JSON, not an
/// object, or a needed field is missing or of the wrong type (integers must fit in 32
/// bits, the columns' INTEGER). `with_id_and_category`: POST's fields.
std::optional<item_input> parse_item_input(std::string_view body, bool with_id_and_category, std::string& why);

/// `{"id":..,"name":..,"category":..,"price":..,"quantity":..}` (category only if `with_category`).
std::string render_written(const item_input& in, bool with_category);

}  // namespace arena
