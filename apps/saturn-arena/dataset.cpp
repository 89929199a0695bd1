#include "dataset.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstring>
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

namespace {
/// Writes an object key that is a constant of this file (plain ASCII letters, so nothing to
/// escape) as it is: rapidjson's Key() scans it a character at a time for escapes, which
/// perf showed as a good part of render_json under the json profile. `quoted` includes
/// the quotes.
template <std::size_t N>
void key(rapidjson::Writer<rapidjson::StringBuffer>& w, const char (&quoted)[N]) {
  w.RawValue(quoted, N - 1, rapidjson::kStringType);
}

/// Writes a string value. The dataset's strings seldom need escaping, so a plain scan
/// decides and such a string is copied in one piece (its opening quote goes through the
/// writer, which writes into `buf` at once, so the commas stay right); any other string
/// takes rapidjson's escaping String().
void string_value(rapidjson::Writer<rapidjson::StringBuffer>& w, rapidjson::StringBuffer& buf, const std::string& s) {
  bool plain = true;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    plain &= c >= 0x20 && c != '"' && c != '\\';
  }
  if (!plain) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return;
  }
  w.RawValue("\"", 1, rapidjson::kStringType);
  char* out = buf.Push(s.size() + 1);
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '"';
}
}  // namespace

std::optional<std::string> render_json(const std::vector<item>& items, std::size_t count, std::int64_t m) {
  const std::size_t n = std::min(count, items.size());
  // About 200 bytes an item: sized once, so the buffer never grows (and copies) mid-way.
  rapidjson::StringBuffer buf(nullptr, 64 + 256 * n);
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  key(w, "\"items\"");
  w.StartArray();
  for (std::size_t i = 0; i < n; ++i) {
    const item& it = items[i];
    w.StartObject();
    key(w, "\"id\"");
    w.Int64(it.id);
    key(w, "\"name\"");
    string_value(w, buf, it.name);
    key(w, "\"category\"");
    string_value(w, buf, it.category);
    key(w, "\"price\"");
    w.Int64(it.price);
    key(w, "\"quantity\"");
    w.Int64(it.quantity);
    key(w, "\"active\"");
    w.Bool(it.active);
    key(w, "\"tags\"");
    w.StartArray();
    for (const std::string& t : it.tags)
      string_value(w, buf, t);
    w.EndArray();
    key(w, "\"rating\"");
    w.StartObject();
    key(w, "\"score\"");
    w.Int64(it.rating_score);
    key(w, "\"count\"");
    w.Int64(it.rating_count);
    w.EndObject();
    std::int64_t pq = 0, total = 0;
    if (__builtin_mul_overflow(it.price, it.quantity, &pq) || __builtin_mul_overflow(pq, m, &total))
      return std::nullopt;
    key(w, "\"total\"");
    w.Int64(total);
    w.EndObject();
  }
  w.EndArray();
  key(w, "\"count\"");
  w.Uint64(n);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace arena
