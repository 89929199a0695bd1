/// \file
/// `compress_response`: applies gzip / brotli to a finished response as the request's
/// Accept-Encoding allows (the steps in compression.hpp's file comment, done once).
#pragma once

#include <saturn/http/compression.hpp>
#include <saturn/http/request.hpp>
#include <saturn/http/response.hpp>

namespace saturn::http {

/// Compresses `resp`'s body in place when the policy (compressible type, at least
/// opts.min_size bytes) and `req`'s Accept-Encoding agree: the body is replaced by the
/// compressed bytes, Content-Encoding is set, an ETag becomes its variant's; Vary:
/// Accept-Encoding is added whenever the answer depends on the field. A response that
/// already has a Content-Encoding, a status without a body (1xx, 204, 304) or a 206 is
/// left alone. Returns the coding applied.
/// Threading: any thread; does not suspend; costs CPU in proportion to the body.
content_coding compress_response(const request& req, response& resp, const compression_options& opts = {});

}  // namespace saturn::http
