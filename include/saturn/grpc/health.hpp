/// \file
/// `grpc::health`: the standard health service, `grpc.health.v1.Health` (Check and Watch,
/// https://github.com/grpc/grpc/blob/master/doc/health-checking.md), which load balancers,
/// Kubernetes' gRPC probes and `grpc_health_probe` ask.
///
///     saturn::grpc::health hc;                 // "" (the whole server): SERVING
///     hc.set("benchmark.BenchmarkService", saturn::grpc::health::serving);
///     saturn::grpc::service svc;
///     hc.add_to(svc);                          // then svc.mount(routes)
///     // ... at shutdown: hc.set("", saturn::grpc::health::not_serving);
///
/// Check answers the status of the service named in the request (NOT_FOUND for a name
/// never set). Watch sends it at once and again on every change, until the client ends
/// the call (a name never set is SERVICE_UNKNOWN, and may become known later).
///
/// Threading: set() and get() from any thread; the methods run on the server's workers.
/// The object must outlive the service it was added to.
#pragma once

#include <saturn/grpc/service.hpp>
#include <saturn/sync/event.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace saturn::grpc {

/// See the file comment.
class health {
 public:
  /// HealthCheckResponse.ServingStatus.
  enum serving_status : std::uint8_t { unknown = 0, serving = 1, not_serving = 2, service_unknown = 3 };

  /// The server as a whole ("") is SERVING.
  health();
  /// Sets the status of `service` ("" for the server) and wakes its watchers. Any thread.
  void set(std::string_view service, serving_status s);
  /// The status of `service`, service_unknown when never set. Any thread.
  serving_status get(std::string_view service) const;
  /// Adds Check and Watch to `svc`.
  void add_to(service& svc);

 private:
  mutable std::mutex m_mu;
  std::map<std::string, serving_status, std::less<>> m_status;
  std::shared_ptr<event> m_changed;  // set (and replaced) by every set()
  friend struct health_access;
};

}  // namespace saturn::grpc
