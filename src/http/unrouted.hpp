// The answer to a request no route serves (404, 405 with Allow, 501, OPTIONS *), shared by
// the HTTP/1.1 and HTTP/2 connections.
#pragma once

#include <saturn/http/request.hpp>
#include <saturn/http/response.hpp>
#include <saturn/http/router.hpp>

#include <string>
#include <string_view>

namespace saturn::http::detail {

/// The answer to a request no handler serves (`status` is the router's 404 / 405 / 501).
/// `path` is the normalized path the router saw.
inline response unrouted(const router& r, const request& req, std::string_view path, int status) {
  if (req.path == "*") {
    // OPTIONS * (the parser allows '*' with OPTIONS only): the server's methods, no body
    // (RFC 9110 §9.3.7).
    response resp;
    resp.content_type = text_value{};
    resp.add_header("Allow", r.allowed_methods("*"));
    return resp;
  }
  if (req.path.front() != '/')
    status = 501;  // authority-form: CONNECT; no tunnels here
  response resp(status, "text/plain", std::string(reason_phrase(status)));
  if (status == 405)
    resp.add_header("Allow", r.allowed_methods(path));  // RFC 9110 §15.5.6: MUST
  return resp;
}

}  // namespace saturn::http::detail
