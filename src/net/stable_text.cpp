// net::stable_text: see include/saturn/net/stable_text.hpp.
#include <saturn/net/stable_text.hpp>

#include <mutex>
#include <unordered_set>

namespace saturn::net {

const char* stable_text(std::string text, const char* fallback) noexcept {
  static std::mutex mu;
  // lifetime: never destroyed, so an error made during static destruction stays valid;
  // node-based, so an element's c_str() never moves.
  static auto* texts = new std::unordered_set<std::string>;
  try {
    std::lock_guard lock(mu);
    if (auto it = texts->find(text); it != texts->end())
      return it->c_str();
    if (texts->size() >= stable_text_limit)
      return fallback;
    return texts->insert(std::move(text)).first->c_str();
  } catch (...) {
    return fallback;
  }
}

}  // namespace saturn::net
