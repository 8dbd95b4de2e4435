package cursor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
)

// displayPath must name every file as adapters.DisplayPath does.
func TestDisplayPath(t *testing.T) {
	t.Parallel()
	for _, cwd := range []string{"", "/", "/p", "/p/q", "p", "/p/", "/p/../q", "/p//q"} {
		for _, path := range []string{"", "a", "a/b", "./a", "a/../b", "../a", "a/", "a//b", "/p", "/p/a", "/p/a/b",
			"/pa/b", "/q/a", "/p/q", "/p/q/a", "/p/./a", "/p/../a", "//p/a", "/", "/p/a/", ".", "..", "...", "/p/..."} {
			p := &parser{cwd: cwd}
			require.Equal(t, adapters.DisplayPath(cwd, path), p.displayPath(path), "cwd %q, path %q", cwd, path)
		}
	}
}

func FuzzDisplayPath(f *testing.F) {
	f.Add("/p/q", "/p/q/a")
	f.Add("/p", "a/b")
	f.Add("/p", "/pa/b")
	f.Fuzz(func(t *testing.T, cwd, path string) {
		p := &parser{cwd: cwd}
		if got, want := p.displayPath(path), adapters.DisplayPath(cwd, path); got != want {
			t.Fatalf("displayPath(%q, %q) = %q, DisplayPath %q", cwd, path, got, want)
		}
	})
}
