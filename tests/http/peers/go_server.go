// A Go net/http server for tests/http/client_peers_test.cpp: http::client against the
// standard library server Go services ship with. Only the standard library, so it builds
// offline from Debian's golang-go. It listens on 127.0.0.1:0 and prints "PORT <n>" on
// stdout, then serves until killed.
//
//	GET  /hello           a fixed text, Content-Length
//	GET  /chunked?n=K     K lines, flushed one by one (chunked transfer coding)
//	POST /echo            the request body back (Go reads it, chunked or not)
//	GET  /close           answers with Connection: close (Go then closes)
//	GET  /redirect        302 to /hello
//	GET  /big             3 MiB of a known pattern (HEAD: the length, no body)
//	GET  /gzip            a text body gzip-encoded by compress/gzip
//
// IdleTimeout is 300 ms: a pooled connection left idle longer is closed by the server.
package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func big() []byte {
	b := make([]byte, 3<<20)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

func main() {
	bigBody := big()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from go")
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		f := w.(http.Flusher)
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "line %d\n", i)
			f.Flush()
		}
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(bigBody)))
		if r.Method == http.MethodHead {
			return
		}
		w.Write(bigBody)
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			http.Error(w, "no gzip asked", http.StatusNotAcceptable)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain")
		z := gzip.NewWriter(w)
		for i := 0; i < 5000; i++ {
			fmt.Fprintf(z, "gzip line %d\n", i)
		}
		z.Close()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "PORT %d\n", ln.Addr().(*net.TCPAddr).Port)
	out.Flush()
	srv := &http.Server{Handler: mux, IdleTimeout: 300 * time.Millisecond}
	srv.Serve(ln)
}
