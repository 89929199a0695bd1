// wrap: function
#include <saturn/grpc/channel.hpp>
#include <chrono>
#include <string>
namespace benchmark {  // what protoc generates for HttpArena's benchmark.proto
struct SumRequest {
  int a() const { return 0; }
  int b() const { return 0; }
  bool ParseFromArray(const void*, int) { return true; }
  bool SerializeToString(std::string*) const { return true; }
};
struct SumReply {
  void set_result(int) {}
  bool ParseFromArray(const void*, int) { return true; }
  bool SerializeToString(std::string*) const { return true; }
};
}  // namespace benchmark
