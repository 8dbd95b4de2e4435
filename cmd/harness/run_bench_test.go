package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRunCommand times the whole 'harness run' command in-process,
// with its session log on (the default): the supervisor, the adapter,
// the stream, the log's redaction and writes, and stdout. With
// BenchmarkParseCommand it is the workload that `make pgo` profiles. The
// agent is make bench's fake, built as its own binary: the fakes in the
// test binary take no arguments.
func BenchmarkRunCommand(b *testing.B) {
	fake := filepath.Join(b.TempDir(), "fakeagent")
	build := exec.Command("go", "build", "-o", fake, "./internal/fakeagent/cmd/fakeagent")
	build.Dir = filepath.Join(pkgDir, "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the fake: %v\n%s", err, out)
	}
	for _, tc := range []struct{ name, spec string }{
		{"print-lines", "print-lines 10000"},     // make bench's wrap overhead
		{"flood-64MiB", "flood-stdout 67108864"}, // make bench's flood, smaller
	} {
		b.Run(tc.name, func(b *testing.B) {
			isolate(b)
			args := []string{"run", "--agent", "claude", "--binary", fake, "--env", "FAKEAGENT_CMD=" + tc.spec, "-p", "bench"}
			for b.Loop() {
				var out strings.Builder
				if code := run(args, strings.NewReader(""), io.Discard, &out); code != 0 {
					b.Fatalf("exit %d: %s", code, out.String())
				}
			}
		})
	}
}
