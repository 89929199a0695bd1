// saturn-bench-json: which JSON library serializes saturn's JSON responses (the decision
// is in docs/decisions/json.md). Not a suite of the peer comparison: both sides are C++.
//
//   saturn-bench-json [--samples S --warmup W --scenario items_1,items_10,items_50]
//
// The response is HttpArena's json profile: a dataset of 50 items (id, name, category,
// price, quantity, active, tags, rating {score, count}) loaded once, and for `count` items
// {"items":[...each item with total = price*quantity rounded to 2 decimals...],"count":N}.
// Each library builds the response body as a std::string, the way a handler hands it to
// the response:
//   - rapidjson: Writer<StringBuffer>, a fresh buffer per response, copied to a string;
//   - rapidjson_reuse: the same writer over one buffer kept across responses (what a
//     per-thread buffer would give), copied to a string;
//   - rapidjson_string: the same writer over an output stream that appends to the
//     std::string itself (reserved at 256 bytes per item), so nothing is copied;
//   - nlohmann: an ordered_json value built from the items, then dump().
// Before timing, the bodies of every library must be byte-identical and parse back (with
// rapidjson's reader) to the expected count and sum of totals; the checksum is the FNV-1a
// of the body shifted right by 11 (to stay exact as a JSON number). Reported per
// response: ns_per_response (wall) and cpu_ns_per_response (the thread's CPU time, which
// holds on a loaded machine), medians of the samples, with the CPU min and max; bytes.
#include "harness.hpp"

#include <nlohmann/json.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct rating {
  double score;
  std::int64_t count;
};

struct item {
  std::int64_t id;
  std::string name;
  std::string category;
  double price;
  std::int64_t quantity;
  bool active;
  std::vector<std::string> tags;
  rating stars;
};

/// 50 items shaped like HttpArena's dataset.json (deterministic; names and prices vary).
std::vector<item> make_dataset() {
  const char* names[] = {"Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet"};
  const char* categories[] = {"electronics", "books", "clothing", "home", "sports"};
  const char* tag_words[] = {"fast", "new", "sale", "popular", "eco", "limited"};
  std::vector<item> items;
  for (std::int64_t i = 1; i <= 50; ++i) {
    item it;
    it.id = i;
    it.name = std::string(names[(i - 1) % 10]) + (i > 10 ? " " + std::to_string(i) : "");
    it.category = categories[(i - 1) % 5];
    // A price is read from decimal text, as from dataset.json: the nearest double to it.
    const std::int64_t cents = (i * 737) % 10000 + 99;
    it.price = std::strtod((std::to_string(cents / 100) + "." + std::to_string(cents / 10 % 10) +
                            std::to_string(cents % 10)).c_str(), nullptr);
    it.quantity = (i * 7) % 20 + 1;
    it.active = i % 3 != 0;
    it.tags = {tag_words[i % 6], tag_words[(i * 5 + 1) % 6]};
    it.stars = {std::strtod((std::to_string(i % 50 / 10) + "." + std::to_string(i % 10)).c_str(), nullptr),
                i * 13 % 500};
    items.push_back(std::move(it));
  }
  items[0].price = 29.99;  // the profile's example item
  items[0].quantity = 5;
  return items;
}

double total_of(const item& it) { return std::round(it.price * static_cast<double>(it.quantity) * 100.0) / 100.0; }

template <class Writer>
void write_items(Writer& w, const std::vector<item>& items, std::size_t count) {
  w.StartObject();
  w.Key("items");
  w.StartArray();
  for (std::size_t i = 0; i < count; ++i) {
    const item& it = items[i];
    w.StartObject();
    w.Key("id");
    w.Int64(it.id);
    w.Key("name");
    w.String(it.name.data(), static_cast<rapidjson::SizeType>(it.name.size()));
    w.Key("category");
    w.String(it.category.data(), static_cast<rapidjson::SizeType>(it.category.size()));
    w.Key("price");
    w.Double(it.price);
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
    w.Double(it.stars.score);
    w.Key("count");
    w.Int64(it.stars.count);
    w.EndObject();
    w.Key("total");
    w.Double(total_of(it));
    w.EndObject();
  }
  w.EndArray();
  w.Key("count");
  w.Uint64(count);
  w.EndObject();
}

std::string with_rapidjson(const std::vector<item>& items, std::size_t count) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  write_items(w, items, count);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string with_rapidjson_reuse(rapidjson::StringBuffer& buf, const std::vector<item>& items, std::size_t count) {
  buf.Clear();
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  write_items(w, items, count);
  return std::string(buf.GetString(), buf.GetSize());
}

/// A rapidjson output stream that appends to a std::string: the body is written where the
/// response keeps it, with no copy.
struct string_stream {
  using Ch = char;
  std::string& out;
  void Put(char c) { out.push_back(c); }
  void Flush() {}
};

std::string with_rapidjson_string(const std::vector<item>& items, std::size_t count) {
  std::string body;
  body.reserve(256 * count);
  string_stream os{body};
  rapidjson::Writer<string_stream> w(os);
  write_items(w, items, count);
  return body;
}

std::string with_nlohmann(const std::vector<item>& items, std::size_t count) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < count; ++i) {
    const item& it = items[i];
    list.push_back({{"id", it.id},
                    {"name", it.name},
                    {"category", it.category},
                    {"price", it.price},
                    {"quantity", it.quantity},
                    {"active", it.active},
                    {"tags", it.tags},
                    {"rating", {{"score", it.stars.score}, {"count", it.stars.count}}},
                    {"total", total_of(it)}});
  }
  nlohmann::ordered_json body = {{"items", std::move(list)}, {"count", count}};
  return body.dump();
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

/// Parses `body` back and checks it says what the dataset says.
void verify(const std::string& body, const std::vector<item>& items, std::size_t count, const char* who) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("items") || !d.HasMember("count"))
    bench::fail(std::string(who) + ": the body is not the expected JSON object");
  if (d["count"].GetUint64() != count || d["items"].Size() != count)
    bench::fail(std::string(who) + ": wrong count");
  double want = 0, got = 0;
  for (std::size_t i = 0; i < count; ++i) {
    want += total_of(items[i]);
    got += d["items"][static_cast<rapidjson::SizeType>(i)]["total"].GetDouble();
    if (d["items"][static_cast<rapidjson::SizeType>(i)]["name"].GetString() != items[i].name)
      bench::fail(std::string(who) + ": wrong name");
  }
  if (want != got)
    bench::fail(std::string(who) + ": totals differ");
}

/// CPU time of the calling thread: the figure that holds on a loaded machine.
std::int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct sample {
  double wall_ns;
  double cpu_ns;
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> scenarios = {"items_1", "items_10", "items_50"};
  bench::args a;
  a.samples = 7;
  CLI::App app{"saturn-bench-json: JSON response serialization, rapidjson vs nlohmann::json"};
  bench::add_common_flags(app, a, scenarios);
  CLI11_PARSE(app, argc, argv);

  const std::vector<item> items = make_dataset();
  rapidjson::StringBuffer kept;
  struct library {
    const char* name;
    std::function<std::string(std::size_t)> serialize;
  };
  const std::vector<library> libraries = {
      {"rapidjson", [&](std::size_t n) { return with_rapidjson(items, n); }},
      {"rapidjson_reuse", [&](std::size_t n) { return with_rapidjson_reuse(kept, items, n); }},
      {"rapidjson_string", [&](std::size_t n) { return with_rapidjson_string(items, n); }},
      {"nlohmann", [&](std::size_t n) { return with_nlohmann(items, n); }},
  };

  for (std::size_t count : {1u, 10u, 50u}) {
    const std::string scenario = "items_" + std::to_string(count);
    if (!a.wants(scenario))
      continue;
    const std::string reference = with_rapidjson(items, count);
    verify(reference, items, count, "rapidjson");
    for (const library& lib : libraries) {
      const std::string body = lib.serialize(count);
      if (body != reference)
        bench::fail(std::string(lib.name) + " and rapidjson disagree for " + scenario + ":\n" + body + "\n" + reference);
    }
    const std::size_t iters = 100'000 / count;
    for (const library& lib : libraries) {
      // One std::function call per response for every library (a few ns of the µs).
      std::vector<sample> runs = bench::run_samples<sample>(a, [&] {
        std::size_t bytes = 0;
        const std::int64_t c0 = thread_cpu_ns();
        const std::int64_t t0 = bench::now_ns();
        for (std::size_t i = 0; i < iters; ++i) {
          std::string body = lib.serialize(count);
          bench::do_not_optimize(body);
          bytes += body.size();
        }
        const std::int64_t t1 = bench::now_ns();
        const std::int64_t c1 = thread_cpu_ns();
        if (bytes != iters * reference.size())
          bench::fail(std::string(lib.name) + ": body size changed while timing");
        const double n = static_cast<double>(iters);
        return sample{static_cast<double>(t1 - t0) / n, static_cast<double>(c1 - c0) / n};
      });
      std::vector<double> wall, cpu;
      for (const sample& r : runs) {
        wall.push_back(r.wall_ns);
        cpu.push_back(r.cpu_ns);
      }
      const auto [lo, hi] = std::minmax_element(cpu.begin(), cpu.end());
      bench::record(std::string("json"), scenario, 1)
          .str("library", lib.name)
          .num("items", static_cast<long long>(count))
          .num("bytes", static_cast<long long>(reference.size()))
          .num("ns_per_response", bench::median(wall), 4)
          .num("cpu_ns_per_response", bench::median(cpu), 4)
          .num("cpu_ns_min", *lo, 4)
          .num("cpu_ns_max", *hi, 4)
          .num("samples", a.samples)
          .num("checksum", static_cast<unsigned long long>(fnv1a(reference) >> 11))
          .emit();
    }
  }
  return 0;
}
