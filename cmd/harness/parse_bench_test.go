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
	root := filepath.Join(pkgDir, "..", "..")
	for _, agent := range capturedAgents() {
		b.Run(agent, func(b *testing.B) {
			file := filepath.Join(b.TempDir(), agent+".jsonl")
			gen := exec.Command("go", "run", "./adapters/internal/benchgen", "-agent", agent, "-size", "16MB", "-cases", cases(agent), "-o", file)
			gen.Dir = root
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

// BenchmarkStartCommand is the work of a command between main and the
// agent's spawn, in-process: building the parser from the grammar,
// parsing, and (for run --dry-run) loading the settings and preparing
// the agent's command line. The package initializers, the other part of
// start-up, are measured by `go run ./internal/perf -run startup`
// (GODEBUG=inittrace=1).
func BenchmarkStartCommand(b *testing.B) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"version", []string{"--version"}},
		{"run-dry-run", []string{"run", "--agent", "claude", "--binary", "/bin/true", "-p", "x", "--dry-run"}},
		{"parse-help", []string{"parse", "--help"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			isolate(b)
			b.ReportAllocs()
			for b.Loop() {
				if code := run(tc.args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
