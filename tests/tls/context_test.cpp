// tls::context: what a bad configuration gets (errors naming the file and OpenSSL's
// reason), and the fixed policy (no protocol below TLS 1.2).
#include "tls_test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

using namespace tls_test;

TEST(tls_context, missing_certificate_file_is_named) {
  auto c = tls::context::server({.certificates = {{"/nonexistent/cert.pem", pki::get().key("localhost")}}});
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.err().message().find("/nonexistent/cert.pem"), std::string::npos) << c.err().message();
  EXPECT_NE(c.err().message().find("No such file"), std::string::npos) << c.err().message();
}

TEST(tls_context, key_that_does_not_match_is_refused) {
  auto c = tls::context::server({.certificates = {{pki::get().pem("localhost"), pki::get().key("other")}}});
  ASSERT_FALSE(c.has_value());
  const std::string m = c.err().message();
  EXPECT_NE(m.find(pki::get().key("other")), std::string::npos) << m;
  EXPECT_NE(m.find("mismatch"), std::string::npos) << m;
}

TEST(tls_context, garbage_pem_gets_openssls_reason) {
  const std::string bad = pki::get().dir() + "/garbage.pem";
  std::ofstream(bad) << "this is not a certificate\n";
  auto c = tls::context::server({.certificates = {{bad, pki::get().key("localhost")}}});
  ASSERT_FALSE(c.has_value());
  const std::string m = c.err().message();
  EXPECT_NE(m.find("tls certificate chain " + bad), std::string::npos) << m;
  EXPECT_EQ(&c.err().code.category(), &tls::openssl_category()) << m;
}

TEST(tls_context, no_certificate_is_an_error) {
  auto c = tls::context::server({});
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.err().message().find("no certificate"), std::string::npos);
}

TEST(tls_context, missing_ca_file_is_named) {
  auto c = tls::context::client({.ca_file = "/nonexistent/ca.pem"});
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.err().message().find("/nonexistent/ca.pem"), std::string::npos) << c.err().message();
}

TEST(tls_context, bad_alpn_is_refused) {
  auto c = tls::context::client({.alpn = {""}});
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.err().message().find("ALPN"), std::string::npos);
}

TEST(tls_context, system_store_loads) {
  auto c = tls::context::client();
  ASSERT_TRUE(c.has_value()) << c.err().message();
  EXPECT_FALSE(c->is_server());
}

TEST(tls_context, ktls_seam_reads_the_kernels_ulp_list) {
  // Whatever this kernel offers, the answer comes from /proc and saturn does not use kTLS.
  std::ifstream f("/proc/sys/net/ipv4/tcp_available_ulp");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(tls::ktls_available(), all.find("tls") != std::string::npos);
}
