// Password hashing for PostgreSQL authentication: md5 and SCRAM-SHA-256 (RFC 5802/7677),
// through OpenSSL's libcrypto.
#pragma once

#include <string>
#include <string_view>

namespace saturn::pg::detail {

/// "md5" + md5hex(md5hex(password + user) + salt), the AuthenticationMD5Password answer.
std::string md5_password(std::string_view user, std::string_view password, std::string_view salt4);

/// One SCRAM-SHA-256 exchange (client side).
class scram {
 public:
  /// The client-first message ("n,,n=,r=<nonce>").
  std::string client_first();
  /// Given the server-first message, the client-final message with the proof; empty if
  /// the server's message is malformed (then `error` says why).
  std::string client_final(std::string_view server_first, std::string_view password, std::string& error);
  /// True if the server-final message carries the expected server signature.
  bool verify_server(std::string_view server_final) const;

 private:
  std::string m_nonce;
  std::string m_client_first_bare;
  std::string m_server_signature;  // base64
};

}  // namespace saturn::pg::detail
