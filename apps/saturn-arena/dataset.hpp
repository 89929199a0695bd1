// The json profile's dataset (HttpArena's dataset.json: an array of items) and the body
// of GET /json/{count}?m=, serialized per request with rapidjson's Writer (see
// docs/decisions/json.md): no response is precomputed.
#pragma once

#include <saturn/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace arena {

/// One item of dataset.json, as read at start.
struct item {
  std::int64_t id = 0;
  std::string name, category;
  std::int64_t price = 0, quantity = 0;
  bool active = false;
  std::vector<std::string> tags;
  std::int64_t rating_score = 0, rating_count = 0;
};

/// Reads and checks `path` (a JSON array of items with the fields above; integers, as
/// HttpArena's are). The error says which item or field is wrong. Main thread, at start.
saturn::result<std::vector<item>> load_dataset(const std::string& path, std::string& why);

/// `{"items":[... the first `count` items, each with "total": price*quantity*m ...],
/// "count":count}`; nullopt when a total does not fit in 64 bits. Any thread.
std::optional<std::string> render_json(const std::vector<item>& items, std::size_t count, std::int64_t m);

}  // namespace arena
