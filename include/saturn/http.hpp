/// \file
/// HTTP/1.1: the request parser, responses and their writer, the router, the server.
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/http/parser.hpp>
#include <saturn/http/request.hpp>
#include <saturn/http/response.hpp>
#include <saturn/http/router.hpp>
#include <saturn/http/server.hpp>
