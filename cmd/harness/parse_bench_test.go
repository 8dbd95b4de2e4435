package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParseCommand times the whole 'harness parse' command in-process
// (file read, line scan, adapter, stream, encoder, buffered write) on a
// stream made by benchgen from each agent's testdata.
func BenchmarkParseCommand(b *testing.B) {
	for _, agent := range []string{"claude", "codex", "cursor", "opencode", "gemini"} {
		b.Run(agent, func(b *testing.B) {
			file := filepath.Join(b.TempDir(), agent+".jsonl")
			gen := exec.Command("go", "run", "./adapters/internal/benchgen", "-agent", agent, "-size", "16MB", "-cases", cases(agent), "-o", file)
			gen.Dir = filepath.Join(pkgDir, "..", "..")
			if out, err := gen.CombinedOutput(); err != nil {
				b.Fatalf("benchgen: %v\n%s", err, out)
			}
			st, err := os.Stat(file)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				if code := run([]string{"parse", "--agent", agent, file}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}

// cases picks the captures the issue measures: Claude's partial-message
// stream, every case of the others.
func cases(agent string) string {
	if agent == "claude" {
		return "partial-*"
	}
	return "*"
}
