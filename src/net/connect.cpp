// net::connect by name: split "host:port", resolve, then try each address in turn with a
// per-attempt time limit, keeping what each failure was for the final error.
#include <saturn/net/connect.hpp>
#include <saturn/task/this_task.hpp>

#include <saturn/net/stable_text.hpp>

namespace saturn::net {

namespace {

error bad_host_port(std::string_view text, const char* why) {
  return error{std::make_error_code(std::errc::invalid_argument),
               stable_text("connect \"" + std::string(text) + "\": " + why, "connect: bad host:port")};
}

bool parse_connect_port(std::string_view s, std::uint16_t& port) noexcept {
  if (s.empty() || s.size() > 5)
    return false;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v == 0 || v > 65535)
    return false;
  port = static_cast<std::uint16_t>(v);
  return true;
}

}  // namespace

result<host_port> split_host_port(std::string_view text) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos)
      return bad_host_port(text, "no ']' after the IPv6 address");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':')
      return bad_host_port(text, "no \":port\" after \"[address]\"");
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return bad_host_port(text, "no port (want \"host:port\")");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return bad_host_port(text, "an IPv6 address needs brackets (\"[::1]:80\")");
  }
  if (host.empty())
    return bad_host_port(text, "empty host");
  std::uint16_t p = 0;
  if (!parse_connect_port(port, p))
    return bad_host_port(text, "the port must be a number from 1 to 65535");
  return host_port{std::string(host), p};
}

task<result<tcp_stream>> connect(std::string_view text, connect_options opts) {
  auto hp = split_host_port(text);
  if (!hp)
    co_return hp.err();
  const std::string name = std::string(text);
  auto addrs = co_await resolve(hp->host, hp->port, opts.resolve);
  if (!addrs)
    co_return addrs.err();

  task_context& ctx = co_await this_task::context();
  // "connect a.test:80 tried 127.0.0.3:80 (Connection refused), then 127.0.0.1:80" and
  // the last error's code: message() adds ": Connection timed out".
  std::string tried = "connect " + name + " tried ";
  error last{};
  for (std::size_t i = 0; i < addrs->size(); ++i) {
    const address& a = (*addrs)[i];
    auto c = co_await tcp_stream::connect(a, opts.attempt_timeout);
    if (c)
      co_return std::move(*c);
    if (i > 0)
      tried += " (" + last.code.message() + "), then ";
    tried += a.to_string();
    last = c.err();
    if (ctx.token.stop_requested() || last == std::errc::operation_canceled)
      break;  // a stop tries no further address
  }
  co_return error{last.code, stable_text(std::move(tried), "connect")};
}

}  // namespace saturn::net
