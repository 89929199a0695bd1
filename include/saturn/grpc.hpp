/// \file
/// gRPC on saturn's HTTP/2 server: services of coroutine methods over protobuf messages
/// (grpc/service.hpp), status codes (grpc/status.hpp) and the standard health service
/// (grpc/health.hpp).
#pragma once

#include <saturn/detail/compiler_check.hpp>
#include <saturn/grpc/channel.hpp>
#include <saturn/grpc/health.hpp>
#include <saturn/grpc/service.hpp>
#include <saturn/grpc/status.hpp>
