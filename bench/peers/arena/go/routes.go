package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/gorilla/websocket"
)

// text answers 200 text/plain with an explicit Content-Length.
func text(w http.ResponseWriter, body string) {
	h := w.Header()
	h["Content-Type"] = []string{"text/plain"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, body)
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
}

// baseline, limited-conn: a + b from the query, plus the integer body for a POST
// (Content-Length or chunked: net/http decodes both).
func baseline(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		methodNotAllowed(w, "GET, POST")
		return
	}
	q := r.URL.Query()
	a, err1 := strconv.ParseInt(q.Get("a"), 10, 64)
	b, err2 := strconv.ParseInt(q.Get("b"), 10, 64)
	if err1 != nil || err2 != nil {
		http.Error(w, "a and b must be integers", http.StatusBadRequest)
		return
	}
	sum := a + b
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(body)), 10, 64)
		if err != nil {
			http.Error(w, "the body must be an integer", http.StatusBadRequest)
			return
		}
		sum += n
	}
	text(w, strconv.FormatInt(sum, 10))
}

// baseline2 (the HTTP/2 profiles): a + b from the query, text/plain.
func baseline2(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	q := r.URL.Query()
	a, err1 := strconv.ParseInt(q.Get("a"), 10, 64)
	b, err2 := strconv.ParseInt(q.Get("b"), 10, 64)
	if err1 != nil || err2 != nil {
		http.Error(w, "a and b must be integers", http.StatusBadRequest)
		return
	}
	text(w, strconv.FormatInt(a+b, 10))
}

// h2Only answers a request that did not come over HTTP/2 with 505: h2c.NewHandler
// passes HTTP/1.1 requests (without an Upgrade) to its handler, and the h2c port
// must not serve HTTP/1.1.
func h2Only(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			w.Header().Set("Connection", "close")
			http.Error(w, "this port serves HTTP/2 (prior knowledge) only", http.StatusHTTPVersionNotSupported)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// pipelined: net/http reads pipelined requests one after another on the
// connection's goroutine and answers them in order.
func pipeline(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	text(w, "ok")
}

type rating struct {
	Score int64 `json:"score"`
	Count int64 `json:"count"`
}

// item is one dataset entry (docs/arena.md §5: exactly these keys, all ints).
type item struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	Category string   `json:"category"`
	Price    int64    `json:"price"`
	Quantity int64    `json:"quantity"`
	Active   bool     `json:"active"`
	Tags     []string `json:"tags"`
	Rating   rating   `json:"rating"`
}

type itemTotal struct {
	item
	Total int64 `json:"total"`
}

type jsonAnswer struct {
	Items []itemTotal `json:"items"`
	Count int         `json:"count"`
}

func loadDataset(path string) ([]item, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var items []item
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	return items, nil
}

// json, json-comp, json-tls: GET /json/{count}?m=, serialised with encoding/json
// on every request; count clamped to 1..len(dataset) (50), m = 1 when absent.
// Compressed when Accept-Encoding asks (compress.go).
func jsonHandler(items []item) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			methodNotAllowed(w, "GET")
			return
		}
		count, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/json/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if count < 1 {
			count = 1
		}
		if count > 50 {
			count = 50
		}
		if count > len(items) {
			count = len(items)
		}
		m := int64(1)
		if v := r.URL.Query().Get("m"); v != "" {
			if m, err = strconv.ParseInt(v, 10, 64); err != nil {
				http.Error(w, "m must be an integer", http.StatusBadRequest)
				return
			}
		}
		out := jsonAnswer{Items: make([]itemTotal, count), Count: count}
		for i := range out.Items {
			it := items[i]
			out.Items[i] = itemTotal{item: it, Total: it.Price * it.Quantity * m}
		}
		body, err := json.Marshal(&out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeCompressed(w, r, "application/json", body)
	})
}

// upload: the body streamed through io.Copy into io.Discard; the answer is the
// count of bytes read. net/http sends 100 Continue when the copy first reads.
func upload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	text(w, strconv.FormatInt(n, 10))
}

// echo-ws: gorilla/websocket's Upgrader with its defaults (a request without the
// upgrade headers gets 400; no Origin header passes its same-origin check), then
// every message read whole and written back with its type. gorilla answers pings
// and close frames itself and refuses unmasked client frames.
var upgrader = websocket.Upgrader{}

func ws(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered with an HTTP error
	}
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(mt, msg); err != nil {
			return
		}
	}
}
