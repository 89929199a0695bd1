// resolve_category: c-ares statuses as std::error_code values, with messages that say
// what failed and what to do about it.
#include <saturn/net/resolve.hpp>

#include <ares.h>

namespace saturn::net {

namespace {

class resolve_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "saturn.resolve"; }
  std::string message(int v) const override {
    switch (static_cast<resolve_errc>(v)) {
      case resolve_errc::not_found: return "no such host (NXDOMAIN); check the spelling of the name";
      case resolve_errc::no_data: return "the name has no address of the family asked for (NODATA)";
      case resolve_errc::timed_out:
        return "timed out: no DNS server answered; check that the servers are up, or raise resolve_options::timeout";
      case resolve_errc::connection_refused:
        return "the DNS server refused the connection (nothing listens there); check /etc/resolv.conf or "
               "resolve_options::servers";
      case resolve_errc::server_failure: return "the DNS server could not answer (SERVFAIL); try again later";
      case resolve_errc::refused: return "the DNS server refused the query (REFUSED); check that it serves this host";
      case resolve_errc::bad_name: return "not a valid host name";
    }
    return ares_strerror(v);
  }
  std::error_condition default_error_condition(int v) const noexcept override {
    if (v == static_cast<int>(resolve_errc::timed_out))
      return std::errc::timed_out;
    return {v, *this};
  }
};

}  // namespace

const std::error_category& resolve_category() noexcept {
  static const resolve_category_impl c;
  return c;
}

}  // namespace saturn::net
