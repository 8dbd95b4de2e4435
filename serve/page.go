package serve

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed web
var webFS embed.FS

// pageHeaders are the headers of everything the page is made of: the
// page itself and its assets (a browser that is served the page under an
// asset's URL must apply the same policy).
func pageHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
	h.Set("X-Content-Type-Options", "nosniff")
}

// routePage serves the page: index.html for every page path (the page
// routes itself), the scripts, styles and the vendored chart library
// under /assets/. Anything else, like the API's unknown endpoints, is a
// JSON 404, whatever its method (ServeMux alone answers a text 404, or a
// text 405 for a page path asked with another method).
func (s *Server) routePage(m *http.ServeMux) {
	sub, _ := fs.Sub(webFS, "web")
	index, _ := fs.ReadFile(sub, "index.html")
	page := func(w http.ResponseWriter, r *http.Request) {
		pageHeaders(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(index)
	}
	m.HandleFunc("GET /{$}", page)
	m.HandleFunc("GET /runs/{run}", page)
	m.HandleFunc("GET /bench", page)
	m.HandleFunc("GET /bench/{id}", page)
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	m.HandleFunc("GET /assets/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			// A directory: its listing, or index.html under a second URL.
			jsonError(w, http.StatusNotFound, "no such asset: "+r.URL.Path)
			return
		}
		pageHeaders(w.Header())
		jw := &jsonErrors{ResponseWriter: w}
		files.ServeHTTP(jw, r)
		jw.done()
	})
	notFound := func(w http.ResponseWriter, r *http.Request) {
		jsonError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	}
	m.HandleFunc("/", notFound)
	// Else ServeMux redirects /assets to /assets/, in HTML, a directory
	// that is a 404 anyway.
	m.HandleFunc("/assets", notFound)
}
