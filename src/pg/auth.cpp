// md5 and SCRAM-SHA-256 for PostgreSQL authentication.
#include "pg/auth.hpp"

#include "pg/text.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <charconv>
#include <cstring>

namespace saturn::pg::detail {
namespace {

std::string hex(const unsigned char* d, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(digits[d[i] >> 4]);
    out.push_back(digits[d[i] & 15]);
  }
  return out;
}

std::string md5hex(std::string_view s) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), out, &n, EVP_md5(), nullptr);
  return hex(out, n);
}

std::string b64(const unsigned char* d, std::size_t n) {
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), d, static_cast<int>(n));
  out.resize(static_cast<std::size_t>(len));
  return out;
}

bool unb64(std::string_view s, std::string& out) {
  out.assign(s.size() / 4 * 3 + 3, '\0');
  const int len = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  if (len < 0)
    return false;
  std::size_t n = static_cast<std::size_t>(len);
  // EVP_DecodeBlock counts padding as zero bytes.
  if (!s.empty() && s.back() == '=')
    --n;
  if (s.size() > 1 && s[s.size() - 2] == '=')
    --n;
  out.resize(n);
  return true;
}

void hmac(const unsigned char* key, std::size_t klen, std::string_view msg, unsigned char out[32]) {
  unsigned int n = 32;
  HMAC(EVP_sha256(), key, static_cast<int>(klen), reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out,
       &n);
}

std::string_view attr(std::string_view msg, char name) {
  while (!msg.empty()) {
    std::string_view part = msg.substr(0, msg.find(','));
    if (part.size() >= 2 && part[0] == name && part[1] == '=')
      return part.substr(2);
    if (part.size() == msg.size())
      break;
    msg.remove_prefix(part.size() + 1);
  }
  return {};
}

}  // namespace

std::string md5_password(std::string_view user, std::string_view password, std::string_view salt4) {
  std::string inner(password);
  inner.append(user);
  std::string outer = md5hex(inner);
  outer.append(salt4);
  return cat({"md5", md5hex(outer)});
}

std::string scram::client_first() {
  unsigned char raw[18];
  RAND_bytes(raw, sizeof raw);
  m_nonce = b64(raw, sizeof raw);
  m_client_first_bare = cat({"n=,r=", m_nonce});
  return cat({"n,,", m_client_first_bare});
}

std::string scram::client_final(std::string_view server_first, std::string_view password, std::string& error) {
  const std::string_view nonce = attr(server_first, 'r');
  const std::string_view salt64 = attr(server_first, 's');
  const std::string_view iter_text = attr(server_first, 'i');
  int iterations = 0;
  std::from_chars(iter_text.data(), iter_text.data() + iter_text.size(), iterations);
  std::string salt;
  if (nonce.size() <= m_nonce.size() || nonce.substr(0, m_nonce.size()) != m_nonce || iterations <= 0 ||
      !unb64(salt64, salt)) {
    error = "malformed SCRAM server-first message";
    return {};
  }
  unsigned char salted[32];
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()), iterations,
                    EVP_sha256(), 32, salted);
  unsigned char client_key[32];
  hmac(salted, 32, "Client Key", client_key);
  unsigned char stored_key[32];
  SHA256(client_key, 32, stored_key);
  std::string final_bare = "c=biws,r=";
  final_bare.append(nonce);
  std::string auth_message = m_client_first_bare;
  auth_message.append(",").append(server_first).append(",").append(final_bare);
  unsigned char signature[32];
  hmac(stored_key, 32, auth_message, signature);
  unsigned char proof[32];
  for (int i = 0; i < 32; ++i)
    proof[i] = client_key[i] ^ signature[i];
  unsigned char server_key[32];
  hmac(salted, 32, "Server Key", server_key);
  unsigned char server_sig[32];
  hmac(server_key, 32, auth_message, server_sig);
  m_server_signature = b64(server_sig, 32);
  final_bare.append(",p=").append(b64(proof, 32));
  return final_bare;
}

bool scram::verify_server(std::string_view server_final) const {
  return !m_server_signature.empty() && attr(server_final, 'v') == m_server_signature;
}

}  // namespace saturn::pg::detail
