// A gRPC client on libgrpc++ (Debian libgrpc++-dev), for tests/grpc/service_test.cpp: calls
// saturn's test service with the generic stub (no generated stubs; the messages are
// test.proto's, through protoc). Prints one line per call: the reply or the status.
//
// usage: grpcpp_client PORT
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "grpc/test.pb.h"

#include <chrono>
#include <cstdio>
#include <future>
#include <string>

namespace {

grpc::Status call(grpc::GenericStub& stub, const std::string& method, const google::protobuf::MessageLite& req,
                  google::protobuf::MessageLite& rep, grpc::ClientContext& ctx) {
  std::string bytes;
  req.SerializeToString(&bytes);
  grpc::Slice slice(bytes);
  grpc::ByteBuffer in(&slice, 1), out;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &in, &out, [&done](grpc::Status st) { done.set_value(st); });
  grpc::Status st = done.get_future().get();
  if (st.ok()) {
    std::vector<grpc::Slice> slices;
    (void)out.Dump(&slices);
    std::string all;
    for (auto& s : slices)
      all.append(reinterpret_cast<const char*>(s.begin()), s.size());
    if (!rep.ParseFromString(all))
      return grpc::Status(grpc::StatusCode::INTERNAL, "reply does not parse");
  }
  return st;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: grpcpp_client PORT\n");
    return 2;
  }
  auto channel = grpc::CreateChannel(std::string("127.0.0.1:") + argv[1], grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    ctx.AddMetadata("x-tag", "cpp");
    saturn_test::Text req, rep;
    req.set_text("from libgrpc++");
    grpc::Status st = call(stub, "/saturn_test.Calc/Echo", req, rep, ctx);
    auto tr = ctx.GetServerTrailingMetadata().find("x-trailer");
    std::printf("echo %d %s %s\n", st.error_code(), rep.text().c_str(),
                tr == ctx.GetServerTrailingMetadata().end() ? "-" : std::string(tr->second.data(), tr->second.size()).c_str());
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    saturn_test::Num req, rep;
    grpc::Status st = call(stub, "/saturn_test.Calc/Slow", req, rep, ctx);
    std::printf("slow %d\n", st.error_code());
  }
  {
    grpc::ClientContext ctx;
    saturn_test::Num req, rep;
    grpc::Status st = call(stub, "/saturn_test.Calc/Fail", req, rep, ctx);
    std::printf("fail %d %s\n", st.error_code(), st.error_message().c_str());
  }
  return 0;
}
