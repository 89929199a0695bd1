// Conversions between C++ values and PostgreSQL's wire formats; pg::error's texts.
#include <saturn/pg/rows.hpp>

#include <charconv>
#include <cstring>
#include <stdexcept>

namespace saturn::pg {
namespace {

// PostgreSQL's binary timestamps count microseconds from 2000-01-01 00:00 UTC.
constexpr std::int64_t pg_epoch_us = 946684800LL * 1000000LL;

std::uint64_t be(const char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

error type_error(const field& f, const char* want) {
  error e;
  e.kind = errc::type;
  e.message.append("column \"").append(f.col != nullptr ? f.col->name : std::string("?"));
  e.message.append("\" (type oid ").append(std::to_string(f.col != nullptr ? f.col->type : 0));
  e.message.append(") cannot be read as ").append(want);
  return e;
}

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "saturn.pg"; }
  std::string message(int c) const override {
    switch (static_cast<errc>(c)) {
      case errc::server: return "server error";
      case errc::connection: return "connection failed";
      case errc::protocol: return "protocol violation";
      case errc::auth: return "authentication failed";
      case errc::config: return "bad connection parameters";
      case errc::type: return "type mismatch";
      case errc::null: return "unexpected NULL";
      case errc::cancelled: return "query cancelled";
      case errc::misuse: return "connection misused";
    }
    return "unknown pg error";
  }
};

}  // namespace

const std::error_category& pg_category() noexcept {
  static const category c;
  return c;
}

std::string error::what() const {
  std::string out;
  if (!sqlstate.empty())
    out.append("ERROR ").append(sqlstate).append(": ");
  else
    out.append(pg_category().message(static_cast<int>(kind))).append(": ");
  out.append(message);
  if (io.operation != nullptr && io.code)
    out.append(" (").append(io.message()).append(")");
  if (!detail.empty())
    out.append(" (DETAIL: ").append(detail).append(")");
  if (!hint.empty())
    out.append(" (HINT: ").append(hint).append(")");
  return out;
}

void detail::throw_error(const error& e) { throw std::runtime_error(e.what()); }

void params::add(timestamp v) {
  binary(oid::timestamptz, static_cast<std::uint64_t>(v.time_since_epoch().count() - pg_epoch_us));
}

error row::index_error(std::size_t i) const {
  error e;
  e.kind = errc::type;
  e.message.append("column index ").append(std::to_string(i)).append(" out of range (");
  e.message.append(std::to_string(size())).append(" columns)");
  return e;
}

std::uint64_t rows::affected() const noexcept {
  const auto sp = m_tag.rfind(' ');
  if (sp == std::string::npos)
    return 0;
  std::uint64_t n = 0;
  std::from_chars(m_tag.data() + sp + 1, m_tag.data() + m_tag.size(), n);
  return n;
}

namespace detail {

error null_error(const field& f) {
  error e;
  e.kind = errc::null;
  e.message.append("column \"").append(f.col != nullptr ? f.col->name : std::string("?"));
  e.message.append("\" is NULL; read it as std::optional");
  return e;
}

error view_error(const field& f) {
  return type_error(f, "std::string_view (a binary non-text value has no text to view; read it as std::string)");
}

result<bool> decode_bool(const field& f) {
  if (f.col->type != oid::boolean || f.size != (f.col->format == 1 ? 1 : 1))
    return type_error(f, "bool");
  return f.col->format == 1 ? f.data[0] != 0 : f.data[0] == 't';
}

result<std::int64_t> decode_int(const field& f, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const std::uint32_t t = f.col->type;
  if (f.col->format == 1) {
    if (t == oid::int2 && f.size == 2)
      v = static_cast<std::int16_t>(be(f.data, 2));
    else if (t == oid::int4 && f.size == 4)
      v = static_cast<std::int32_t>(be(f.data, 4));
    else if (t == oid::oid && f.size == 4)
      v = static_cast<std::int64_t>(be(f.data, 4));
    else if (t == oid::int8 && f.size == 8)
      v = static_cast<std::int64_t>(be(f.data, 8));
    else
      return type_error(f, "an integer");
  } else {
    auto [p, ec] = std::from_chars(f.data, f.data + f.size, v);
    if (ec != std::errc{} || p != f.data + f.size)
      return type_error(f, "an integer");
  }
  if (v < lo || v > hi)
    return type_error(f, "this integer type (out of range)");
  return v;
}

result<double> decode_float(const field& f, bool single) {
  const std::uint32_t t = f.col->type;
  if (f.col->format == 1) {
    if (t == oid::float4 && f.size == 4) {
      const auto u = static_cast<std::uint32_t>(be(f.data, 4));
      float x;
      std::memcpy(&x, &u, 4);
      return static_cast<double>(x);
    }
    if (t == oid::float8 && f.size == 8 && !single) {
      const std::uint64_t u = be(f.data, 8);
      double x;
      std::memcpy(&x, &u, 8);
      return x;
    }
    return type_error(f, single ? "float" : "double");
  }
  // Text form (numeric and others): parse it.
  std::string s(f.data, static_cast<std::size_t>(f.size));
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size())
    return type_error(f, "a floating-point number");
  return x;
}

result<std::string_view> decode_text(const field& f, std::string& scratch) {
  if (f.col->format == 0)
    return std::string_view(f.data, static_cast<std::size_t>(f.size));
  switch (f.col->type) {
    case oid::text:
    case oid::varchar:
    case oid::bpchar:
    case oid::name:
    case oid::json: return std::string_view(f.data, static_cast<std::size_t>(f.size));
    case oid::jsonb:
      if (f.size < 1 || f.data[0] != 1)
        return type_error(f, "text (unknown jsonb version)");
      return std::string_view(f.data + 1, static_cast<std::size_t>(f.size - 1));
    case oid::int2:
    case oid::int4:
    case oid::int8:
    case oid::oid: {
      auto v = decode_int(f, INT64_MIN, INT64_MAX);
      if (!v)
        return v.err();
      scratch = std::to_string(*v);
      return std::string_view(scratch);
    }
    case oid::boolean: scratch.assign(1, f.data[0] != 0 ? 't' : 'f'); return std::string_view(scratch);
    default: return type_error(f, "text");
  }
}

result<bytea> decode_bytea(const field& f) {
  if (f.col->type != oid::bytea || f.col->format != 1)
    return type_error(f, "bytea");
  bytea b;
  b.data.resize(static_cast<std::size_t>(f.size));
  std::memcpy(b.data.data(), f.data, b.data.size());
  return b;
}

result<timestamp> decode_timestamp(const field& f) {
  if ((f.col->type != oid::timestamp && f.col->type != oid::timestamptz) || f.col->format != 1 || f.size != 8)
    return type_error(f, "a timestamp");
  const auto us = static_cast<std::int64_t>(be(f.data, 8));
  return timestamp(std::chrono::microseconds(us + pg_epoch_us));
}

}  // namespace detail
}  // namespace saturn::pg
