// rpc-go: the rpc suite's grpc-go peer (bench/peers/rpc/README.md): HttpArena's
// benchmark.BenchmarkService/GetSum (result = a + b) and grpc.health.v1.Health with
// benchmark.BenchmarkService and "" SERVING, on 127.0.0.1:--port, grpc.NewServer()
// with its defaults (h2c prior knowledge, as grpc-go serves without TLS credentials).
// --threads sets GOMAXPROCS (the CPUs the Go scheduler runs goroutines on).
//
// Built by bench/peers/build-go.sh in GOPATH mode against Debian's sources
// (golang-google-grpc-dev 1.33 and its dependencies under /usr/share/gocode); the
// generated code in benchmark/ was made by Debian's protoc-gen-go 1.28.1 and
// protoc-gen-go-grpc 1.0 (the command is in the README).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "rpcpeer/benchmark"
)

type sum struct {
	pb.UnimplementedBenchmarkServiceServer
}

func (sum) GetSum(_ context.Context, in *pb.SumRequest) (*pb.SumReply, error) {
	return &pb.SumReply{Result: in.A + in.B}, nil
}

func main() {
	port := flag.Int("port", 8080, "TCP port on 127.0.0.1")
	threads := flag.Int("threads", runtime.NumCPU(), "GOMAXPROCS")
	flag.Parse()
	runtime.GOMAXPROCS(*threads)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "rpc-go:", err)
		os.Exit(1)
	}
	srv := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(srv, sum{})
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("benchmark.BenchmarkService", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		srv.Stop()
	}()
	fmt.Fprintf(os.Stderr, "rpc-go: listening on 127.0.0.1:%d, GOMAXPROCS %d\n", *port, *threads)
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "rpc-go:", err)
		os.Exit(1)
	}
}
