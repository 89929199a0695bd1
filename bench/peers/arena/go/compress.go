package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

// Levels: each library's default, what a Go user gets from gzip.NewWriter and
// brotli.NewWriter (and from brotli.HTTPCompressor): gzip 6, brotli 6.
const (
	gzipLevel   = gzip.DefaultCompression
	brotliLevel = brotli.DefaultCompression
)

// Writers and buffers are reused through sync.Pool, the usual Go idiom for
// compression middleware (gziphandler, gzhttp): a fresh gzip or brotli writer
// allocates hundreds of KB of tables.
var (
	gzipPool = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzipLevel)
		return w
	}}
	brotliPool = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, brotliLevel) }}
	bufPool    = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// acceptQ returns the q values Accept-Encoding gives br and gzip (an explicit
// entry wins over "*"; absent or q=0 means not acceptable).
func acceptQ(r *http.Request) (br, gz float64) {
	br, gz = -1, -1
	star := 0.0
	for _, line := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(line, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						q = f
					} else {
						q = 0
					}
				}
			}
			switch name {
			case "br":
				br = q
			case "gzip", "x-gzip":
				gz = q
			case "*":
				star = q
			}
		}
	}
	if br < 0 {
		br = star
	}
	if gz < 0 {
		gz = star
	}
	return br, gz
}

// encoding picks "br", "gzip" or "" (identity). br wins a tie: it is smaller.
func encoding(r *http.Request, haveBr, haveGz bool) string {
	br, gz := acceptQ(r)
	if !haveBr {
		br = 0
	}
	if !haveGz {
		gz = 0
	}
	switch {
	case br > 0 && br >= gz:
		return "br"
	case gz > 0:
		return "gzip"
	}
	return ""
}

// writeCompressed answers 200 with body, compressed per request when the client
// accepts br or gzip. Content-Length is always set.
func writeCompressed(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{contentType}
	h["Vary"] = []string{"Accept-Encoding"}
	enc := encoding(r, true, true)
	if enc == "" {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		w.WriteHeader(http.StatusOK)
		w.Write(body)
		return
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if enc == "br" {
		zw := brotliPool.Get().(*brotli.Writer)
		zw.Reset(buf)
		zw.Write(body)
		zw.Close()
		brotliPool.Put(zw)
	} else {
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(buf)
		zw.Write(body)
		zw.Close()
		gzipPool.Put(zw)
	}
	h["Content-Encoding"] = []string{enc}
	h["Content-Length"] = []string{strconv.Itoa(buf.Len())}
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}
