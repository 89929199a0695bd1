/// \file
/// gRPC status codes (the canonical set of grpc/status.h and the gRPC protocol spec) and
/// `grpc::status`: what a call ends with — sent as the `grpc-status` and `grpc-message`
/// trailers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace saturn::grpc {

/// The canonical status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html).
enum class status_code : std::uint8_t {
  ok = 0,
  cancelled = 1,
  unknown = 2,
  invalid_argument = 3,
  deadline_exceeded = 4,
  not_found = 5,
  already_exists = 6,
  permission_denied = 7,
  resource_exhausted = 8,
  failed_precondition = 9,
  aborted = 10,
  out_of_range = 11,
  unimplemented = 12,
  internal = 13,
  unavailable = 14,
  data_loss = 15,
  unauthenticated = 16,
};

/// The name of `c` ("DEADLINE_EXCEEDED"), "UNKNOWN" for a value outside the set.
std::string_view status_name(status_code c) noexcept;

/// A call's outcome: a code and, for an error, a message for people (sent percent-encoded
/// as grpc-message). Threading: a plain value.
struct status {
  status_code code = status_code::ok;
  std::string message{};

  /// The OK status.
  static status success() { return {}; }
  bool ok() const noexcept { return code == status_code::ok; }
};

}  // namespace saturn::grpc
