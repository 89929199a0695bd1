#include <saturn/http/compress_response.hpp>

namespace saturn::http {

content_coding compress_response(const request& req, response& resp, const compression_options& opts) {
  const int st = resp.status;
  if ((st >= 100 && st < 200) || st == 204 || st == 304 || st == 206 || !resp.header("Content-Encoding").empty())
    return content_coding::identity;
  std::string_view body = resp.body();
  compression_decision d = decide_compression(req.headers(), resp.content_type.view(), body.size(), opts);
  if (d.vary)
    resp.set_header("Vary", add_vary_accept_encoding(resp.header("Vary")));
  if (d.coding == content_coding::identity)
    return content_coding::identity;
  auto packed = compress(d.coding, body, opts);
  if (!packed)
    return content_coding::identity;  // send it as it is: compression is an optimization
  resp.set_body(std::move(*packed));
  resp.set_header("Content-Encoding", coding_name(d.coding));
  if (std::string_view etag = resp.header("ETag"); !etag.empty())
    resp.set_header("ETag", variant_etag(etag, d.coding));
  return d.coding;
}

}  // namespace saturn::http
