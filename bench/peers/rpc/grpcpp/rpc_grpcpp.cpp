// rpc-grpcpp: the rpc suite's libgrpc++ peer (bench/peers/rpc/README.md). HttpArena's
// benchmark.BenchmarkService/GetSum (result = a + b) on the asynchronous API — the
// completion-queue server of gRPC's own greeter_async_server example, one completion
// queue and one polling thread per --threads, each thread keeping one call armed per
// queue state machine (CallData) — plus grpc.health.v1.Health from
// grpc::EnableDefaultHealthCheckService(true) (serving: "" and
// benchmark.BenchmarkService). Cleartext (InsecureServerCredentials: h2c prior
// knowledge) on 127.0.0.1:--port; every other server setting is libgrpc++'s default.
// SIGTERM/SIGINT: Shutdown, then the queues are drained and the program exits 0.
//
// --inproc N: no server port; N unary GetSum calls through the server's InProcessChannel
// with a synchronous stub on one thread (checksummed), prints one JSON line
// (scenario inproc_unary, ns_per_call) — the in-process reference of the rpc suite.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmark.grpc.pb.h"

namespace {

using benchmark::BenchmarkService;
using benchmark::SumReply;
using benchmark::SumRequest;

class call_data {
 public:
  call_data(BenchmarkService::AsyncService* svc, grpc::ServerCompletionQueue* cq) : m_svc(svc), m_cq(cq), m_writer(&m_ctx) {
    m_svc->RequestGetSum(&m_ctx, &m_req, &m_writer, m_cq, m_cq, this);
  }
  // One completion of this call's tag: ok says whether the operation succeeded.
  void proceed(bool ok) {
    if (m_state == state::processing && ok) {
      new call_data(m_svc, m_cq);  // arm the next call before serving this one
      m_rep.set_result(m_req.a() + m_req.b());
      m_state = state::finishing;
      m_writer.Finish(m_rep, grpc::Status::OK, this);
    } else {
      delete this;  // finished, or the queue is shutting down
    }
  }

 private:
  enum class state { processing, finishing };
  BenchmarkService::AsyncService* m_svc;
  grpc::ServerCompletionQueue* m_cq;
  grpc::ServerContext m_ctx;
  SumRequest m_req;
  SumReply m_rep;
  grpc::ServerAsyncResponseWriter<SumReply> m_writer;
  state m_state = state::processing;
};

// Calls kept armed per queue (each re-arms itself when a call arrives): with one, a
// burst of streams waits for the poller to re-arm between calls; gRPC's own async
// qps benchmark server keeps many.
constexpr int kArmed = 64;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

int inproc(long n) {
  // The in-process reference: a synchronous service on the server, called through its
  // InProcessChannel (no sockets; requests and replies are still serialized).
  struct sync_sum final : BenchmarkService::Service {
    grpc::Status GetSum(grpc::ServerContext*, const SumRequest* in, SumReply* out) override {
      out->set_result(in->a() + in->b());
      return grpc::Status::OK;
    }
  } svc;
  grpc::ServerBuilder b;
  b.RegisterService(&svc);
  std::unique_ptr<grpc::Server> server = b.BuildAndStart();
  auto stub = BenchmarkService::NewStub(server->InProcessChannel(grpc::ChannelArguments{}));
  long long checksum = 0, want = 0, bad = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    SumRequest req;
    req.set_a(static_cast<int>(i & 0x3fffffff));
    req.set_b(7);
    SumReply rep;
    grpc::ClientContext ctx;
    grpc::Status st = stub->GetSum(&ctx, req, &rep);
    bad += st.ok() ? 0 : 1;
    checksum += rep.result();
    want += (i & 0x3fffffff) + 7;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  server->Shutdown();
  if (bad != 0 || checksum != want) {
    std::fprintf(stderr, "rpc-grpcpp: %lld calls failed, checksum %lld != %lld\n", bad, checksum, want);
    return 1;
  }
  std::printf("{\"suite\":\"rpc\",\"scenario\":\"inproc_unary\",\"runtime\":\"grpcpp\",\"threads\":1,"
              "\"calls\":%ld,\"ns_per_call\":%.3f,\"expected_checksum\":%lld,\"checksum\":%lld}\n",
              n, s * 1e9 / static_cast<double>(n), want, checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 8080, threads = static_cast<int>(std::thread::hardware_concurrency());
  long inproc_calls = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--port") == 0)
      port = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--threads") == 0)
      threads = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--inproc") == 0)
      inproc_calls = std::atol(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: rpc-grpcpp [--port P] [--threads N] [--inproc CALLS]\n");
      return 2;
    }
  }
  if (inproc_calls > 0)
    return inproc(inproc_calls);
  threads = threads < 1 ? 1 : threads;
  grpc::EnableDefaultHealthCheckService(true);
  BenchmarkService::AsyncService svc;
  grpc::ServerBuilder b;
  int bound = 0;
  b.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &bound);
  b.RegisterService(&svc);
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> cqs;
  for (int i = 0; i < threads; ++i)
    cqs.push_back(b.AddCompletionQueue());
  std::unique_ptr<grpc::Server> server = b.BuildAndStart();
  if (!server || bound == 0) {
    std::fprintf(stderr, "rpc-grpcpp: cannot listen on 127.0.0.1:%d\n", port);
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus(true);  // ""
  server->GetHealthCheckService()->SetServingStatus("benchmark.BenchmarkService", true);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::vector<std::thread> pollers;
  for (auto& cq : cqs) {
    pollers.emplace_back([&svc, q = cq.get()] {
      for (int k = 0; k < kArmed; ++k)
        new call_data(&svc, q);
      void* tag = nullptr;
      bool ok = false;
      while (q->Next(&tag, &ok))
        static_cast<call_data*>(tag)->proceed(ok);
    });
  }
  std::fprintf(stderr, "rpc-grpcpp: listening on 127.0.0.1:%d, %d completion queues\n", port, threads);
  while (!g_stop.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  server->Shutdown();
  for (auto& cq : cqs)
    cq->Shutdown();
  for (auto& t : pollers)
    t.join();
  return 0;
}
