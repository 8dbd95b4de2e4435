package adapters

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// DisplayPath's short way for plain paths must name every file as the
// way through filepath does.
func TestDisplayPath(t *testing.T) {
	t.Parallel()
	for _, cwd := range []string{"", "/", "/p", "/p/q", "p", "/p/", "/p/../q", "/p//q"} {
		for _, path := range []string{"", "a", "a/b", "./a", "a/../b", "../a", "a/", "a//b", "/p", "/p/a", "/p/a/b",
			"/pa/b", "/q/a", "/p/q", "/p/q/a", "/p/./a", "/p/../a", "//p/a", "/", "/p/a/", ".", "..", "...", "/p/..."} {
			require.Equal(t, cleanDisplayPath(cwd, path), DisplayPath(cwd, path), "cwd %q, path %q", cwd, path)
		}
	}
}

func FuzzDisplayPath(f *testing.F) {
	f.Add("/p/q", "/p/q/a")
	f.Add("/p", "a/b")
	f.Add("/p", "/pa/b")
	f.Fuzz(func(t *testing.T, cwd, path string) {
		if got, want := DisplayPath(cwd, path), cleanDisplayPath(cwd, path); got != want {
			t.Fatalf("DisplayPath(%q, %q) = %q, through filepath %q", cwd, path, got, want)
		}
	})
}
