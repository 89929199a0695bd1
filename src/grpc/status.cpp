// The names of gRPC's status codes.
#include <saturn/grpc/status.hpp>

namespace saturn::grpc {

std::string_view status_name(status_code c) noexcept {
  static constexpr std::string_view names[] = {
      "OK",        "CANCELLED",          "UNKNOWN",           "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",   "OUT_OF_RANGE",
      "UNIMPLEMENTED", "INTERNAL",        "UNAVAILABLE",       "DATA_LOSS",         "UNAUTHENTICATED"};
  const auto i = static_cast<std::size_t>(c);
  return i < sizeof names / sizeof names[0] ? names[i] : "UNKNOWN";
}

}  // namespace saturn::grpc
