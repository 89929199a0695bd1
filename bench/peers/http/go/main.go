// Command http-go is the `http` suite's server (docs/workloads.md) on net/http.
//
//	http-go --port P [--threads W]
//
// GOMAXPROCS = W. net/http's Server on 127.0.0.1:P: a goroutine per connection,
// keep-alive; pipelined requests are answered in order. net/http adds Date;
// Server, Content-Type and Content-Length are set here. Routes: GET /plaintext,
// /json, /delay/{ms} (time.Sleep parks only that goroutine); anything else 404.
package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	peer "saturnpeers/common/go"
)

var (
	helloBody    = []byte("Hello, World!")
	jsonBody     = []byte(`{"message":"Hello, World!"}`)
	notFoundBody = []byte("Not Found")
)

func write(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h["Server"] = []string{"go"}
	h["Content-Type"] = []string{contentType}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

func route(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		write(w, http.StatusNotFound, "text/plain", notFoundBody)
		return
	}
	switch path := r.URL.Path; {
	case path == "/plaintext":
		write(w, http.StatusOK, "text/plain", helloBody)
	case path == "/json":
		write(w, http.StatusOK, "application/json", jsonBody)
	case strings.HasPrefix(path, "/delay/"):
		ms, err := strconv.ParseUint(path[len("/delay/"):], 10, 31)
		if err != nil {
			write(w, http.StatusNotFound, "text/plain", notFoundBody)
			return
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		write(w, http.StatusOK, "text/plain", []byte(strconv.FormatUint(ms, 10)))
	default:
		write(w, http.StatusNotFound, "text/plain", notFoundBody)
	}
}

func main() {
	port, _ := peer.ServerFlags()
	srv := &http.Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Handler: http.HandlerFunc(route)}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "http-go:", err)
		os.Exit(1)
	}
}
