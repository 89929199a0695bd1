#include "dataset.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

namespace arena {

namespace {

bool get_int(const rapidjson::Value& o, const char* key, std::int64_t& out) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsInt64())
    return false;
  out = it->value.GetInt64();
  return true;
}

bool get_string(const rapidjson::Value& o, const char* key, std::string& out) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsString())
    return false;
  out.assign(it->value.GetString(), it->value.GetStringLength());
  return true;
}

}  // namespace

saturn::result<std::vector<item>> load_dataset(const std::string& path, std::string& why) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    why = "cannot open " + path;
    return saturn::error{std::make_error_code(std::errc::no_such_file_or_directory), "dataset"};
  }
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  auto bad = [&](std::string w) -> saturn::result<std::vector<item>> {
    why = path + ": " + std::move(w);
    return saturn::error{std::make_error_code(std::errc::invalid_argument), "dataset"};
  };
  if (doc.HasParseError())
    return bad(std::string("not JSON at offset ") + std::to_string(doc.GetErrorOffset()) + ": " +
               rapidjson::GetParseError_En(doc.GetParseError()));
  if (!doc.IsArray())
    return bad("the top level is not an array of items");
  std::vector<item> items;
  items.reserve(doc.Size());
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    const rapidjson::Value& o = doc[i];
    item it;
    const std::string where = "item " + std::to_string(i) + ": ";
    if (!o.IsObject())
      return bad(where + "not an object");
    if (!get_int(o, "id", it.id) || !get_string(o, "name", it.name) || !get_string(o, "category", it.category) ||
        !get_int(o, "price", it.price) || !get_int(o, "quantity", it.quantity))
      return bad(where + "needs id, name, category, price and quantity (integers and strings)");
    auto active = o.FindMember("active");
    if (active == o.MemberEnd() || !active->value.IsBool())
      return bad(where + "needs a boolean \"active\"");
    it.active = active->value.GetBool();
    auto tags = o.FindMember("tags");
    if (tags == o.MemberEnd() || !tags->value.IsArray())
      return bad(where + "needs an array \"tags\"");
    for (auto& t : tags->value.GetArray()) {
      if (!t.IsString())
        return bad(where + "a tag is not a string");
      it.tags.emplace_back(t.GetString(), t.GetStringLength());
    }
    auto rating = o.FindMember("rating");
    if (rating == o.MemberEnd() || !rating->value.IsObject() || !get_int(rating->value, "score", it.rating_score) ||
        !get_int(rating->value, "count", it.rating_count))
      return bad(where + "needs \"rating\": {\"score\": int, \"count\": int}");
    items.push_back(std::move(it));
  }
  return items;
}

std::optional<std::string> render_json(const std::vector<item>& items, std::size_t count, std::int64_t m) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (std::size_t i = 0; i < count && i < items.size(); ++i) {
    const item& it = items[i];
    w.StartObject();
    w.Key("id");
    w.Int64(it.id);
    w.Key("name");
    w.String(it.name.data(), static_cast<rapidjson::SizeType>(it.name.size()));
    w.Key("category");
    w.String(it.category.data(), static_cast<rapidjson::SizeType>(it.category.size()));
    w.Key("price");
    w.Int64(it.price);
    w.Key("quantity");
    w.Int64(it.quantity);
    w.Key("active");
    w.Bool(it.active);
    w.Key("tags");
    w.StartArray();
    for (const std::string& t : it.tags)
      w.String(t.data(), static_cast<rapidjson::SizeType>(t.size()));
    w.EndArray();
    w.Key("rating");
    w.StartObject();
    w.Key("score");
    w.Int64(it.rating_score);
    w.Key("count");
    w.Int64(it.rating_count);
    w.EndObject();
    std::int64_t pq = 0, total = 0;
    if (__builtin_mul_overflow(it.price, it.quantity, &pq) || __builtin_mul_overflow(pq, m, &total))
      return std::nullopt;
    w.Key("total");
    w.Int64(total);
    w.EndObject();
  }
  w.EndArray();
  w.Key("count");
  w.Uint64(std::min(count, items.size()));
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace arena
