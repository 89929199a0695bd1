// Command arena-go is the `arena` suite's Go peer (bench/peers/arena/README.md) on
// net/http, crypto/tls and gorilla/websocket.
//
//	arena-go --port P --threads W --data DIR [--tls-port Q --tls-cert CRT --tls-key KEY]
//	         [--h2-port R] [--h2c-port S]
//
// GOMAXPROCS = W. One http.Server on 127.0.0.1:P (and one with TLS on 127.0.0.1:Q,
// ALPN http/1.1 only), all with the same ServeMux. --h2-port R: HTTP/2 over TLS
// (net/http's built-in h2, ALPN h2 then http/1.1; baseline-h2, static-h2). --h2c-port S:
// cleartext HTTP/2 by prior knowledge only (golang.org/x/net/http2/h2c; HTTP/1.1 there
// gets 505; baseline-h2c, json-h2c). Routes: /baseline11, /baseline2, /pipeline,
// /json/{count}, /upload, /static/, /ws (docs/arena.md §2, §4), and with DATABASE_URL
// /async-db and /crud/items (db.go, pgx v4's pgxpool). SIGTERM: Shutdown, exit 0 within 2 s.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

func main() {
	port := flag.Int("port", 8080, "HTTP/1.1 port on 127.0.0.1")
	threads := flag.Int("threads", runtime.NumCPU(), "GOMAXPROCS")
	data := flag.String("data", "/data", "folder with dataset.json and static/")
	tlsPort := flag.Int("tls-port", 0, "HTTPS port on 127.0.0.1 (0: none)")
	tlsCert := flag.String("tls-cert", "/certs/server.crt", "PEM certificate chain")
	tlsKey := flag.String("tls-key", "/certs/server.key", "PEM private key")
	h2Port := flag.Int("h2-port", 0, "HTTP/2 over TLS port on 127.0.0.1, ALPN h2 and http/1.1 (0: none)")
	h2cPort := flag.Int("h2c-port", 0, "cleartext HTTP/2 (prior knowledge) only port on 127.0.0.1 (0: none)")
	flag.Parse()
	bad := func(p int) bool { return p < 0 || p > 65535 }
	if flag.NArg() > 0 || *threads < 1 || bad(*port) || bad(*tlsPort) || bad(*h2Port) || bad(*h2cPort) {
		flag.Usage()
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*threads)

	items, err := loadDataset(filepath.Join(*data, "dataset.json"))
	if err != nil {
		fatal(err)
	}
	files, err := loadStatic(filepath.Join(*data, "static"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "arena-go: static:", err, "(/static answers 404)")
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/baseline11", baseline)
	mux.HandleFunc("/baseline2", baseline2)
	mux.HandleFunc("/pipeline", pipeline)
	mux.Handle("/json/", jsonHandler(items))
	mux.HandleFunc("/upload", upload)
	mux.Handle("/static/", staticHandler(files))
	mux.HandleFunc("/ws", ws)
	db, err := openDatabase()
	if err != nil {
		fatal(fmt.Errorf("DATABASE_URL: %w", err))
	}
	dbRoutes(mux, db)

	servers := []*http.Server{{Addr: fmt.Sprintf("127.0.0.1:%d", *port), Handler: mux}}
	var cert tls.Certificate
	if *tlsPort > 0 || *h2Port > 0 {
		cert, err = tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			fatal(fmt.Errorf("tls: %w", err))
		}
	}
	if *h2Port > 0 {
		// net/http's own HTTP/2: ListenAndServeTLS with TLSNextProto left nil sets up
		// h2 and offers ALPN h2, then http/1.1 (Go's defaults, nothing tuned).
		servers = append(servers, &http.Server{
			Addr:      fmt.Sprintf("127.0.0.1:%d", *h2Port),
			Handler:   mux,
			TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		})
	}
	if *h2cPort > 0 {
		// x/net's h2c handler with its default http2.Server: a connection that starts
		// with the HTTP/2 preface is served as HTTP/2; anything else is refused (the
		// port is h2c-only, as HttpArena's validation requires).
		servers = append(servers, &http.Server{
			Addr:    fmt.Sprintf("127.0.0.1:%d", *h2cPort),
			Handler: h2c.NewHandler(h2Only(mux), &http2.Server{}),
		})
	}
	if *tlsPort > 0 {
		servers = append(servers, &http.Server{
			Addr:    fmt.Sprintf("127.0.0.1:%d", *tlsPort),
			Handler: mux,
			TLSConfig: &tls.Config{
				Certificates: []tls.Certificate{cert},
				NextProtos:   []string{"http/1.1"},
			},
			// A non-nil empty map: net/http does not configure HTTP/2, so ALPN
			// never offers h2.
			TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		})
	}

	errs := make(chan error, len(servers))
	for _, s := range servers {
		go func(s *http.Server) {
			var err error
			if s.TLSConfig != nil {
				err = s.ListenAndServeTLS("", "")
			} else {
				err = s.ListenAndServe()
			}
			if !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		}(s)
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-errs:
		fatal(err)
	case <-stop:
	}
	// Graceful: stop accepting, close idle connections, let requests in progress
	// finish; whatever is still busy after 1 s is closed (exit within 2 s).
	// Hijacked WebSocket connections end with the process.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func(s *http.Server) {
			defer wg.Done()
			if s.Shutdown(ctx) != nil {
				s.Close()
			}
		}(s)
	}
	wg.Wait()
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "arena-go:", err)
	os.Exit(1)
}
