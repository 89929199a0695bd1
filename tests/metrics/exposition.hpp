// A strict reader of the Prometheus text format (0.0.4) for the tests: it checks every
// line and gives back the samples, so a test can assert on values.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace saturn_test {

struct sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // unescaped values
  double value = 0;
  std::string label(const std::string& k) const {
    for (auto& [n, v] : labels)
      if (n == k)
        return v;
    return "\x01missing";
  }
};

struct exposition {
  std::vector<sample> samples;
  std::map<std::string, std::string> types;  // family → type
  std::map<std::string, std::string> helps;

  /// Samples named `name` whose labels include every one of `want`.
  std::vector<sample> find(const std::string& name,
                           const std::vector<std::pair<std::string, std::string>>& want = {}) const {
    std::vector<sample> out;
    for (auto& s : samples) {
      if (s.name != name)
        continue;
      bool ok = true;
      for (auto& [k, v] : want)
        ok = ok && s.label(k) == v;
      if (ok)
        out.push_back(s);
    }
    return out;
  }
  double sum(const std::string& name, const std::vector<std::pair<std::string, std::string>>& want = {}) const {
    double t = 0;
    for (auto& s : find(name, want))
      t += s.value;
    return t;
  }
};

inline bool metric_name_ok(const std::string& n) {
  if (n.empty())
    return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool a = std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
    if (!(a || (i > 0 && std::isdigit(static_cast<unsigned char>(c)))))
      return false;
  }
  return true;
}

/// The family a sample belongs to (histogram suffixes stripped when the family is one).
inline std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suf : {"_bucket", "_sum", "_count"}) {
    std::string s = suf;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      std::string base = name.substr(0, name.size() - s.size());
      auto it = types.find(base);
      if (it != types.end() && it->second == "histogram")
        return base;
    }
  }
  return name;
}

/// Parses `text`, failing the test (ADD_FAILURE) on the first malformed line; checks that
/// HELP and TYPE come once per family, before its samples, and that a family's samples are
/// contiguous.
inline exposition parse_exposition(const std::string& text) {
  exposition e;
  if (!text.empty() && text.back() != '\n')
    ADD_FAILURE() << "the text does not end with a newline";
  std::istringstream in(text);
  std::string line;
  std::set<std::string> closed;  // families whose samples ended
  std::string current;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) {
      ADD_FAILURE() << "line " << n << " is empty";
      continue;
    }
    if (line[0] == '#') {
      std::istringstream ls(line);
      std::string hash, kind, name;
      ls >> hash >> kind >> name;
      if (kind != "HELP" && kind != "TYPE") {
        ADD_FAILURE() << "line " << n << ": unknown comment " << line;
        continue;
      }
      if (!metric_name_ok(name))
        ADD_FAILURE() << "line " << n << ": bad name " << name;
      std::string rest;
      std::getline(ls, rest);
      if (!rest.empty() && rest[0] == ' ')
        rest.erase(0, 1);
      auto& m = kind == "HELP" ? e.helps : e.types;
      if (m.count(name))
        ADD_FAILURE() << "line " << n << ": second " << kind << " for " << name;
      if (kind == "TYPE" && rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" &&
          rest != "untyped")
        ADD_FAILURE() << "line " << n << ": bad type " << rest;
      if (closed.count(name) || (current == name && kind == "TYPE" && false))
        ADD_FAILURE() << "line " << n << ": " << kind << " after samples of " << name;
      m[name] = rest;
      continue;
    }
    sample s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ')
      ++i;
    s.name = line.substr(0, i);
    if (!metric_name_ok(s.name)) {
      ADD_FAILURE() << "line " << n << ": bad sample name in " << line;
      continue;
    }
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::size_t eq = line.find('=', i);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          ADD_FAILURE() << "line " << n << ": bad label in " << line;
          break;
        }
        std::string k = line.substr(i, eq - i);
        std::string v;
        std::size_t j = eq + 2;
        bool closed_q = false;
        for (; j < line.size(); ++j) {
          char c = line[j];
          if (c == '\\') {
            if (j + 1 >= line.size()) break;
            char d = line[++j];
            if (d == 'n') v += '\n';
            else if (d == '\\') v += '\\';
            else if (d == '"') v += '"';
            else ADD_FAILURE() << "line " << n << ": bad escape \\" << d;
          } else if (c == '"') {
            closed_q = true;
            break;
          } else if (c == '\n') {
            ADD_FAILURE() << "raw newline";
          } else {
            v += c;
          }
        }
        if (!closed_q) {
          ADD_FAILURE() << "line " << n << ": unterminated label value in " << line;
          break;
        }
        s.labels.emplace_back(k, v);
        i = j + 1;
        if (i < line.size() && line[i] == ',')
          ++i;
      }
      if (i >= line.size() || line[i] != '}') {
        ADD_FAILURE() << "line " << n << ": no closing brace in " << line;
        continue;
      }
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') {
      ADD_FAILURE() << "line " << n << ": no space before the value in " << line;
      continue;
    }
    std::string val = line.substr(i + 1);
    if (val == "+Inf") s.value = HUGE_VAL;
    else if (val == "-Inf") s.value = -HUGE_VAL;
    else if (val == "NaN") s.value = NAN;
    else {
      char* end = nullptr;
      s.value = std::strtod(val.c_str(), &end);
      if (end == val.c_str() || *end != '\0')
        ADD_FAILURE() << "line " << n << ": bad value '" << val << "'";
    }
    const std::string fam = family_of(s.name, e.types);
    if (!e.types.count(fam) || !e.helps.count(fam))
      ADD_FAILURE() << "line " << n << ": sample of " << fam << " before its HELP and TYPE";
    if (fam != current) {
      if (!current.empty())
        closed.insert(current);
      if (closed.count(fam))
        ADD_FAILURE() << "line " << n << ": samples of " << fam << " are not contiguous";
      current = fam;
    }
    e.samples.push_back(std::move(s));
  }
  return e;
}

/// Checks every histogram in `e`: buckets cumulative (non-decreasing in le), a +Inf bucket
/// equal to _count, per label set. Returns how many histogram series it checked.
inline int check_histograms(const exposition& e) {
  int checked = 0;
  for (auto& [fam, type] : e.types) {
    if (type != "histogram")
      continue;
    std::map<std::string, std::vector<std::pair<double, double>>> buckets;  // labels w/o le → (le, v)
    std::map<std::string, double> counts;
    auto key = [](const sample& s) {
      std::string k;
      for (auto& [n, v] : s.labels)
        if (n != "le")
          k += n + "=" + v + ",";
      return k;
    };
    for (auto& s : e.samples) {
      if (s.name == fam + "_bucket")
        buckets[key(s)].emplace_back(std::strtod(s.label("le") == "+Inf" ? "inf" : s.label("le").c_str(), nullptr),
                                     s.value);
      else if (s.name == fam + "_count")
        counts[key(s)] = s.value;
    }
    for (auto& [k, bs] : buckets) {
      ++checked;
      for (std::size_t i = 1; i < bs.size(); ++i) {
        EXPECT_LT(bs[i - 1].first, bs[i].first) << fam << " le not ascending";
        EXPECT_LE(bs[i - 1].second, bs[i].second) << fam << " buckets not cumulative";
      }
      EXPECT_TRUE(!bs.empty() && std::isinf(bs.back().first)) << fam << " has no +Inf bucket";
      EXPECT_EQ(bs.back().second, counts[k]) << fam << " +Inf bucket != _count";
    }
  }
  return checked;
}

}  // namespace saturn_test
