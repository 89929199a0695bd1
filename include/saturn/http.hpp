/// \file
/// HTTP/1.1: the request parser, requests and their query parameters, responses and their
/// writer, the router, the server, http::serve (a whole service in one call),
/// content-coding negotiation and gzip/brotli compression, static files, and WebSocket.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/http/accept_encoding.hpp>
#include <saturn/http/compress_response.hpp>
#include <saturn/http/compression.hpp>
#include <saturn/http/content_coding.hpp>
#include <saturn/http/decoded.hpp>
#include <saturn/http/h2_options.hpp>
#include <saturn/http/param.hpp>
#include <saturn/http/debug_route.hpp>
#include <saturn/http/metrics_route.hpp>
#include <saturn/http/middleware.hpp>
#include <saturn/http/parser.hpp>
#include <saturn/http/query.hpp>
#include <saturn/http/request.hpp>
#include <saturn/http/response.hpp>
#include <saturn/http/route_params.hpp>
#include <saturn/http/router.hpp>
#include <saturn/http/serve.hpp>
#include <saturn/http/server.hpp>
#include <saturn/http/static_files.hpp>
#include <saturn/http/text_value.hpp>
#include <saturn/http/websocket.hpp>
