package main

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ p, want float64 }{
		{0, 1}, {50, 3}, {100, 5}, {25, 2}, {90, 4.6}, {99, 4.96}, {-1, 1}, {101, 5},
	} {
		if got := percentile(xs, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("percentile(%v, %v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if xs[0] != 5 {
		t.Errorf("percentile sorted its input: %v", xs)
	}
	if got := percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("percentile(nil) = %v, want NaN", got)
	}
	if got := median([]float64{7}); got != 7 {
		t.Errorf("median([7]) = %v", got)
	}
	if got := median([]float64{1, 2, 3, 10}); got != 2.5 {
		t.Errorf("median of even count = %v, want 2.5", got)
	}
}

const hfJSON = `{"results":[
 {"command":"bin/harness --version","mean":0.004,"stddev":0.001,"median":0.0035,"user":0.002,"system":0.001,"min":0.003,"max":0.006,"times":[0.003,0.0035,0.006],"exit_codes":[0,0,0]},
 {"command":"/bin/true","mean":0.001,"stddev":0.0001,"user":0.0005,"system":0.0001,"min":0.0009,"max":0.0012,"times":[0.0012,0.0009,0.001],"exit_codes":[0,0,0]}]}`

func TestParseHyperfine(t *testing.T) {
	res, err := parseHyperfine([]byte(hfJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Command != "bin/harness --version" || res[0].Median != 0.0035 || len(res[0].Times) != 3 {
		t.Fatalf("first result: %+v", res)
	}
	if res[1].Median != 0.001 { // no median field: computed from times
		t.Errorf("computed median = %v, want 0.001", res[1].Median)
	}
	for _, bad := range []string{``, `{}`, `{"results":[]}`, `{"results":[{"command":"x","times":[]}]}`, `not json`} {
		if _, err := parseHyperfine([]byte(bad)); err == nil {
			t.Errorf("parseHyperfine(%q) succeeded", bad)
		}
	}
}

const benchOut = `goos: linux
goarch: amd64
pkg: github.com/agentharness/harness/adapters/claude
cpu: AMD EPYC
BenchmarkNormalize-2   	      20	  58224561 ns/op	 360.20 MB/s	 6905232 B/op	  147421 allocs/op
BenchmarkParse         	       2	 592373318 ns/op	  35.40 MB/s	 6061512 B/op	  135558 allocs/op
PASS
ok  	github.com/agentharness/harness/adapters/claude	3.1s
pkg: github.com/agentharness/harness/process
BenchmarkStdoutThroughput-2   	      12	  94760304 ns/op	 708.20 MB/s	   65000 lines/op	  563184 B/op	    1562 allocs/op
BenchmarkBroken-2 --- FAIL
`

func TestParseGoBench(t *testing.T) {
	old := meanLine["claude"]
	meanLine["claude"] = 1000
	defer func() { meanLine["claude"] = old }()
	got := parseGoBench(benchOut)
	if len(got) != 3 {
		t.Fatalf("got %d results: %+v", len(got), got)
	}
	n := got[0]
	if n.Pkg != "adapters/claude" || n.Name != "BenchmarkNormalize" || n.Iterations != 20 || n.NsPerOp != 58224561 ||
		n.MBPerSec != 360.2 || n.BPerOp != 6905232 || n.AllocsOp != 147421 {
		t.Errorf("normalize: %+v", n)
	}
	// 360.2 MB/s × 58.22 ms = 20.97 MB per op = 20972 lines of 1000 bytes.
	if n.PerLine != "≈ 7.029" {
		t.Errorf("normalize allocs/line = %q", n.PerLine)
	}
	if got[1].Name != "BenchmarkParse" {
		t.Errorf("name without a GOMAXPROCS suffix: %q", got[1].Name)
	}
	p := got[2]
	if p.Pkg != "process" || p.Metrics["lines/op"] != 65000 || p.AllocsOp != 1562 || p.PerLine != "0.024" {
		t.Errorf("process: %+v", p)
	}
}

func TestParseStamp(t *testing.T) {
	line := []byte(`{"v":1,"type":"message","text":"` + fakeagent.StampPrefix + `12:345678","message_id":"m"}` + "\n")
	seq, ns, ok := parseStamp(line)
	if !ok || seq != 12 || ns != 345678 {
		t.Errorf("parseStamp = %d %d %v", seq, ns, ok)
	}
	for _, bad := range []string{`{"text":"hello"}`, `lat:x:1`, `lat:3`, `lat:3:`} {
		if _, _, ok := parseStamp([]byte(bad)); ok {
			t.Errorf("parseStamp(%q) ok", bad)
		}
	}
}

func TestReadStampsFirstArrivalOnly(t *testing.T) {
	now := fakeagent.MonotonicNS()
	if now <= 0 {
		t.Fatal("no monotonic clock")
	}
	stamp := func(seq int, ns int64) string {
		return `{"text":"lat:` + itoa(int64(seq)) + ":" + itoa(ns) + `"}` + "\n"
	}
	in := stamp(1, now) + stamp(1, now) + "no stamp\n" + strings.Repeat("x", 2<<20) + "\n" + stamp(2, now-int64(time.Second))
	lat, err := readStamps(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 2 {
		t.Fatalf("got %d samples, want 2 (a stamp counts once): %v", len(lat), lat)
	}
	if lat[0] < 0 || lat[0] > 1000 || lat[1] < 1000 {
		t.Errorf("latencies in ms = %v, want [small, ≥ 1000]", lat)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestWriteReport(t *testing.T) {
	var buf bytes.Buffer
	figs := []row{
		{Figure: "start-up", Value: "3.1 ms", Reference: "1.0 ms /bin/true", Ratio: "+2.1 ms", Target: "≤ 10 ms", Met: metStr(true)},
		failedRow("memory", "≤ 50 MB", errors.New("exit status 1: a|b")),
	}
	benches := parseGoBench(benchOut)
	writeReport(&buf, machine{Date: "2026-01-01 00:00 UTC", NProc: 2, CPU: "X", Load: "1 2 3", GoVersion: "go1.26", Commit: "abc"}, figs, benches, nil, []string{"a note"})
	out := buf.String()
	for _, want := range []string{
		"| figure | value | reference | ratio | target | met? |",
		"| start-up | 3.1 ms | 1.0 ms /bin/true | +2.1 ms | ≤ 10 ms | yes |",
		"| memory | failed: exit status 1: a/b | — | — | ≤ 50 MB | **no** |",
		"| adapters/claude | BenchmarkNormalize | 58224561 | 360.2 | 6905232 | 147421 |",
		"- machine: 2 CPUs, X; load average at start: 1 2 3",
		"- a note",
		"make bench",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Smoke run") {
		t.Error("a full run is labelled smoke")
	}
	for i, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| ") && strings.Count(l, "|") != 7 && strings.Count(l, "|") != 8 {
			t.Errorf("line %d has a stray '|': %q", i+1, l)
		}
	}
}

func TestCountLinesAndPartials(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(f, []byte("a\nbb\nccc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	size, lines, err := countLines(f)
	if err != nil || size != 9 || lines != 3 {
		t.Errorf("countLines = %d %d %v", size, lines, err)
	}
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	for _, n := range []string{"partial-a.jsonl", "partial-a.golden.ndjson", "partial-b.raw.jsonl", "text.jsonl"} {
		os.WriteFile(filepath.Join(src, n), []byte("{}\n"), 0o644)
	}
	dst := filepath.Join(dir, "dst")
	if err := copyPartials(src, dst); err != nil {
		t.Fatal(err)
	}
	got, _ := filepath.Glob(filepath.Join(dst, "*"))
	if len(got) != 2 {
		t.Errorf("copied %v, want partial-a.jsonl and its golden", got)
	}
	if err := copyPartials(filepath.Join(dir, "none"), filepath.Join(dir, "x")); err == nil {
		t.Error("copyPartials of an empty directory succeeded")
	}
}

func TestInitTrace(t *testing.T) {
	out := "init internal/bytealg @0.003 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/mattn/go-runewidth @2.4 ms, 100 ms clock, 18776 bytes, 44 allocs\n" +
		"harness dev\n" +
		"init encoding/gob @1.4 ms, 0.24 ms clock, 27568 bytes, 368 allocs\n"
	m := parseInitTrace(out)
	if len(m) != 3 || m["github.com/mattn/go-runewidth"] != 100 || m["encoding/gob"] != 0.24 {
		t.Fatalf("parseInitTrace = %v", m)
	}
	if n, b, a := initCounts(out); n != 3 || b != 46344 || a != 412 {
		t.Errorf("initCounts = %d packages, %d bytes, %d allocs; want 3, 46344, 412", n, b, a)
	}
	runs := []map[string]float64{m, {"github.com/mattn/go-runewidth": 20, "encoding/gob": 0.5}, {"github.com/mattn/go-runewidth": 30}}
	got := slowestInits(runs, 2)
	want := []string{"github.com/mattn/go-runewidth 30.0 ms", "encoding/gob 0.4 ms"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("slowestInits = %q, want %q", got, want)
	}
}

// TestTurnStamp: the session rows read the time the fake read each prompt
// from the turn's answer; a turn that failed, or a stream that ends, is
// an error, not a figure.
func TestTurnStamp(t *testing.T) {
	sc := bufio.NewScanner(strings.NewReader(`{"type":"turn_start","turn_id":"turn_1"}
{"type":"turn_end","status":"success","text":"recv 12345"}
{"type":"turn_end","status":"error","text":""}
`))
	ns, err := turnStamp(sc)
	require.NoError(t, err)
	require.Equal(t, int64(12345), ns)
	_, err = turnStamp(sc)
	require.ErrorContains(t, err, "ended error")
	_, err = turnStamp(sc)
	require.ErrorContains(t, err, "stream ended")
}
