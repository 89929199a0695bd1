// A gRPC server on libgrpc++ (Debian libgrpc++-dev) for saturn's grpc::channel to call
// (tests/grpc/service_test.cpp): saturn_test.Calc/Echo (unary: the text back, trailing
// metadata x-trailer) and saturn_test.Calc/Count (server streaming: 1..n), through the
// callback generic service — no generated stubs. Prints its port, serves until stdin ends.
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include "grpc/test.pb.h"

#include <cstdio>
#include <iostream>
#include <string>

namespace {

std::string flatten(const grpc::ByteBuffer& b) {
  std::vector<grpc::Slice> slices;
  (void)b.Dump(&slices);
  std::string all;
  for (auto& s : slices)
    all.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return all;
}

grpc::ByteBuffer buffer_of(const google::protobuf::MessageLite& m) {
  std::string bytes;
  m.SerializeToString(&bytes);
  grpc::Slice s(bytes);
  return grpc::ByteBuffer(&s, 1);
}

/// Reads the one request, then answers as the method says.
class call final : public grpc::ServerGenericBidiReactor {
 public:
  explicit call(grpc::GenericCallbackServerContext* ctx) : m_ctx(ctx) { StartRead(&m_in); }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INTERNAL, "no request"));
      return;
    }
    const std::string method = m_ctx->method();
    if (method == "/saturn_test.Calc/Echo") {
      saturn_test::Text in;
      in.ParseFromString(flatten(m_in));
      auto tag = m_ctx->client_metadata().find("x-tag");
      m_ctx->AddTrailingMetadata("x-trailer", "cpp:" + (tag == m_ctx->client_metadata().end()
                                                           ? std::string()
                                                           : std::string(tag->second.data(), tag->second.size())));
      m_out = buffer_of(in);
      StartWriteAndFinish(&m_out, grpc::WriteOptions(), grpc::Status::OK);
    } else if (method == "/saturn_test.Calc/Count") {
      saturn_test::Num in;
      in.ParseFromString(flatten(m_in));
      m_left = in.value();
      next();
    } else {
      Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no such method"));
    }
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::CANCELLED);
      return;
    }
    next();
  }
  void OnDone() override { delete this; }

 private:
  void next() {
    if (m_sent == m_left) {
      Finish(grpc::Status::OK);
      return;
    }
    saturn_test::Num n;
    n.set_value(++m_sent);
    m_out = buffer_of(n);
    StartWrite(&m_out);
  }
  grpc::GenericCallbackServerContext* m_ctx;
  grpc::ByteBuffer m_in, m_out;
  std::int64_t m_left = 0, m_sent = 0;
};

class service final : public grpc::CallbackGenericService {
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new call(ctx);
  }
};

}  // namespace

int main() {
  service svc;
  int port = 0;
  grpc::ServerBuilder b;
  b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  b.RegisterCallbackGenericService(&svc);
  std::unique_ptr<grpc::Server> server = b.BuildAndStart();
  if (!server || port == 0)
    return 1;
  std::printf("%d\n", port);
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  server->Shutdown();
  return 0;
}
