package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed web
var webFS embed.FS

// routePage serves the page: index.html for every page path (the page
// routes itself), the scripts, styles and the vendored chart library
// under /assets/.
func (s *Server) routePage(m *http.ServeMux) {
	sub, _ := fs.Sub(webFS, "web")
	index, _ := fs.ReadFile(sub, "index.html")
	page := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(index)
	}
	m.HandleFunc("GET /{$}", page)
	m.HandleFunc("GET /runs/{run}", page)
	m.HandleFunc("GET /bench", page)
	m.HandleFunc("GET /bench/{id}", page)
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(sub)))
}
