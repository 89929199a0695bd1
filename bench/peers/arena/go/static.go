package main

import (
	"bytes"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// staticFile is one file of DIR/static with its precompressed siblings (nil
// when absent), read once at start.
type staticFile struct {
	plain, br, gz []byte
	contentType   string
	modTime       time.Time
}

// loadStatic reads every file under dir into memory, keyed by its slash path
// relative to dir; NAME.br and NAME.gz become NAME's siblings.
func loadStatic(dir string) (map[string]*staticFile, error) {
	files := map[string]*staticFile{}
	raw := map[string][]byte{}
	mod := map[string]time.Time{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		raw[rel], mod[rel] = b, info.ModTime()
		return nil
	})
	for name, b := range raw {
		if strings.HasSuffix(name, ".br") || strings.HasSuffix(name, ".gz") {
			if _, ok := raw[name[:len(name)-3]]; ok {
				continue // a sibling, attached below
			}
		}
		ct := mime.TypeByExtension(filepath.Ext(name))
		if ct == "" {
			ct = http.DetectContentType(b)
		}
		files[name] = &staticFile{plain: b, br: raw[name+".br"], gz: raw[name+".gz"],
			contentType: ct, modTime: mod[name]}
	}
	return files, err
}

// staticHandler serves GET /static/NAME from memory through http.ServeContent
// (Content-Length, Last-Modified, conditional and Range requests, as
// http.FileServer does), the .br or .gz sibling when Accept-Encoding allows it
// (Content-Encoding set, Content-Type of the original). Unknown names: 404.
func staticHandler(files map[string]*staticFile) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD")
			return
		}
		f := files[strings.TrimPrefix(r.URL.Path, "/static/")]
		if f == nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{f.contentType}
		body := f.plain
		if f.br != nil || f.gz != nil {
			h["Vary"] = []string{"Accept-Encoding"}
			switch encoding(r, f.br != nil, f.gz != nil) {
			case "br":
				h["Content-Encoding"] = []string{"br"}
				body = f.br
			case "gzip":
				h["Content-Encoding"] = []string{"gzip"}
				body = f.gz
			}
		}
		http.ServeContent(w, r, "", f.modTime, bytes.NewReader(body))
	})
}
