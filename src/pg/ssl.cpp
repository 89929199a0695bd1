// TLS to the server (libpq's sslmode): the SSLRequest, the server's one-byte answer, and
// the handshake through saturn::tls (OpenSSL on memory buffers; the ring does the I/O).
//
// Only the one answer byte is read before the handshake, so nothing a server (or a man in
// the middle) sends after its 'S' can be taken as protocol data outside TLS (libpq's
// CVE-2021-23222): such bytes reach the handshake and fail it. CancelRequest goes plain,
// on its own connection, as libpq before version 17 sends it.
#include "pg/state.hpp"
#include "pg/text.hpp"

#include <saturn/tls/context.hpp>

#include <map>
#include <mutex>
#include <tuple>

namespace saturn::pg::detail {
namespace {

constexpr std::int32_t ssl_request_code = 80877103;  // 1234 << 16 | 5679

/// One client context per (verify, CA file), made on first use and kept: making one reads
/// the CA store, far too slow for every connection of a pool.
saturn::result<tls::context> client_context(bool verify, const std::string& ca_file) {
  static std::mutex lock;
  static auto* contexts = new std::map<std::pair<bool, std::string>, tls::context>;  // lifetime: process
  std::lock_guard g(lock);
  auto key = std::make_pair(verify, ca_file);
  if (auto it = contexts->find(key); it != contexts->end())
    return it->second;
  auto made = tls::context::client({.verify = verify, .ca_file = ca_file});
  if (!made)
    return made.err();
  contexts->emplace(std::move(key), *made);
  return *made;
}

}  // namespace

task<result<void>> negotiate_tls(connection_state* s) {
  const ssl_mode mode = s->cfg.sslmode;
  if (mode == ssl_mode::disable || mode == ssl_mode::allow)
    co_return result<void>{};
  char req[8];
  const std::int32_t len = 8;
  for (int i = 0; i < 4; ++i) {
    req[i] = static_cast<char>((len >> (24 - 8 * i)) & 0xff);
    req[4 + i] = static_cast<char>((ssl_request_code >> (24 - 8 * i)) & 0xff);
  }
  auto sent = co_await s->sock.send(std::as_bytes(std::span(req, sizeof req)));
  if (!sent)
    co_return s->fail(errc::connection, "send of SSLRequest failed", sent.err());
  char answer = 0;
  auto got = co_await s->sock.recv(std::as_writable_bytes(std::span(&answer, 1)));
  if (!got)
    co_return s->fail(errc::connection, "receive of the server's answer to SSLRequest failed", got.err());
  if (*got == 0)
    co_return s->fail(errc::connection, "the server closed the connection after SSLRequest");
  if (answer == 'N') {
    if (mode == ssl_mode::prefer)
      co_return result<void>{};
    co_return s->fail(errc::connection,
                      "the server does not accept TLS connections (sslmode=require or stricter; set ssl = on in "
                      "postgresql.conf, or use sslmode=prefer)");
  }
  if (answer != 'S')
    co_return s->fail(errc::protocol, cat({"unexpected answer '", std::string(1, answer), "' to SSLRequest"}));

  const bool verify = mode == ssl_mode::verify_ca || mode == ssl_mode::verify_full;
  const std::string ca = s->cfg.sslrootcert == "system" ? std::string() : s->cfg.sslrootcert;
  auto ctx = client_context(verify, verify ? ca : std::string());
  if (!ctx)
    co_return s->fail(errc::config, cat({"TLS client context: ", ctx.err().message()}));
  // verify-ca checks the chain only: no host name is given to check (nor sent as SNI).
  const std::string host = mode == ssl_mode::verify_ca ? std::string() : s->cfg.host;
  auto st = tls::stream::client(*ctx, std::move(s->sock), host);
  if (!st)
    co_return s->fail(errc::connection, cat({"TLS to ", s->cfg.host, ": ", st.err().message()}), st.err());
  s->tls = std::make_unique<tls::stream>(std::move(*st));
  const auto timeout =
      s->cfg.connect_timeout.count() > 0 ? s->cfg.connect_timeout : std::chrono::milliseconds(std::chrono::hours(1));
  auto hs = co_await s->tls->handshake(timeout);
  if (!hs)
    co_return s->fail(errc::connection, cat({"TLS handshake with ", s->cfg.host, " failed: ", hs.err().message()}),
                      hs.err());
  co_return result<void>{};
}

}  // namespace saturn::pg::detail
