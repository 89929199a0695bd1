#include "item_json.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <limits>

namespace arena {

namespace {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put_string(writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

/// One item object from a row of item_columns. `tags` is JSONB: its text is JSON already
/// and goes out as it came from the server.
bool write_item(writer& w, const saturn::pg::row& row, std::string& why) {
  auto id = row.get<std::int32_t>(0);
  auto name = row.get<std::string_view>(1);
  auto category = row.get<std::string_view>(2);
  auto price = row.get<std::int32_t>(3);
  auto quantity = row.get<std::int32_t>(4);
  auto active = row.get<bool>(5);
  auto tags = row.get<std::string_view>(6);
  auto score = row.get<std::int32_t>(7);
  auto count = row.get<std::int32_t>(8);
  if (!id || !name || !category || !price || !quantity || !active || !tags || !score || !count) {
    why = !id         ? id.err().what()
          : !name     ? name.err().what()
          : !category ? category.err().what()
          : !price    ? price.err().what()
          : !quantity ? quantity.err().what()
          : !active   ? active.err().what()
          : !tags     ? tags.err().what()
          : !score    ? score.err().what()
                      : count.err().what();
    return false;
  }
  w.StartObject();
  w.Key("id");
  w.Int(*id);
  w.Key("name");
  put_string(w, *name);
  w.Key("category");
  put_string(w, *category);
  w.Key("price");
  w.Int(*price);
  w.Key("quantity");
  w.Int(*quantity);
  w.Key("active");
  w.Bool(*active);
  w.Key("tags");
  w.RawValue(tags->data(), tags->size(), rapidjson::kArrayType);
  w.Key("rating");
  w.StartObject();
  w.Key("score");
  w.Int(*score);
  w.Key("count");
  w.Int(*count);
  w.EndObject();
  w.EndObject();
  return true;
}

bool write_items(writer& w, const saturn::pg::rows& rows, std::string& why) {
  w.Key("items");
  w.StartArray();
  for (saturn::pg::row row : rows)
    if (!write_item(w, row, why))
      return false;
  w.EndArray();
  return true;
}

std::string take(const rapidjson::StringBuffer& buf) { return std::string(buf.GetString(), buf.GetSize()); }

bool get_int32(const rapidjson::Value& o, const char* key, std::int32_t& out, std::string& why) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd()) {
    why = std::string("missing \"") + key + "\"";
    return false;
  }
  if (!it->value.IsInt()) {  // an integer within 32 bits (INTEGER columns)
    why = std::string("\"") + key + "\" must be an integer between -2147483648 and 2147483647";
    return false;
  }
  out = it->value.GetInt();
  return true;
}

bool get_string(const rapidjson::Value& o, const char* key, std::string& out, std::string& why) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsString()) {
    why = std::string("\"") + key + "\" must be a string";
    return false;
  }
  out.assign(it->value.GetString(), it->value.GetStringLength());
  return true;
}

}  // namespace

std::optional<std::string> render_items_count(const saturn::pg::rows& rows, std::string& why) {
  rapidjson::StringBuffer buf;
  writer w(buf);
  w.StartObject();
  if (!write_items(w, rows, why))
    return std::nullopt;
  w.Key("count");
  w.Uint64(rows.size());
  w.EndObject();
  return take(buf);
}

std::optional<std::string> render_items_page(const saturn::pg::rows& rows, std::int64_t page, std::int64_t limit,
                                             std::string& why) {
  rapidjson::StringBuffer buf;
  writer w(buf);
  w.StartObject();
  if (!write_items(w, rows, why))
    return std::nullopt;
  w.Key("total");  // load-more pagination: the items of this page (HttpArena's rule)
  w.Uint64(rows.size());
  w.Key("page");
  w.Int64(page);
  w.Key("limit");
  w.Int64(limit);
  w.EndObject();
  return take(buf);
}

std::optional<std::string> render_item(const saturn::pg::row& row, std::string& why) {
  rapidjson::StringBuffer buf;
  writer w(buf);
  if (!write_item(w, row, why))
    return std::nullopt;
  return take(buf);
}

std::optional<item_input> parse_item_input(std::string_view body, bool with_id_and_category, std::string& why) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(body.data(), body.size());
  if (doc.HasParseError()) {
    why = std::string("the body is not JSON (offset ") + std::to_string(doc.GetErrorOffset()) +
          "): " + rapidjson::GetParseError_En(doc.GetParseError());
    return std::nullopt;
  }
  if (!doc.IsObject()) {
    why = "the body must be a JSON object";
    return std::nullopt;
  }
  item_input in;
  if (with_id_and_category && (!get_int32(doc, "id", in.id, why) || !get_string(doc, "category", in.category, why)))
    return std::nullopt;
  if (!get_string(doc, "name", in.name, why) || !get_int32(doc, "price", in.price, why) ||
      !get_int32(doc, "quantity", in.quantity, why))
    return std::nullopt;
  return in;
}

std::string render_written(const item_input& in, bool with_category) {
  rapidjson::StringBuffer buf;
  writer w(buf);
  w.StartObject();
  w.Key("id");
  w.Int(in.id);
  w.Key("name");
  put_string(w, in.name);
  if (with_category) {
    w.Key("category");
    put_string(w, in.category);
  }
  w.Key("price");
  w.Int(in.price);
  w.Key("quantity");
  w.Int(in.quantity);
  w.EndObject();
  return take(buf);
}

}  // namespace arena
