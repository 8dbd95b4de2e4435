// Package adaptertest holds what every adapter's tests do alike: golden
// files of the native captures (with -update), the stream invariants and
// the JSON Schema on every output, command lines (Commands,
// CommandErrors), the fuzz target with the captures as seeds (FuzzParse),
// the benchmarks make bench reads (BenchNormalize, BenchParse), and the
// replay of the goldens' diffs with git apply (DiffCaptures, ApplyDiff).
package adaptertest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/internal/benchdata"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/schemacheck"
	"github.com/agentharness/harness/linescan"
	"github.com/agentharness/harness/process"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// RunID is the run id of every normalized test stream.
const RunID = "run_01HARNESSTEST0000000000000"

// Epoch is the first instant of the test clock.
var Epoch = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

// Clock returns a deterministic clock that advances 1 ms per reading.
func Clock() func() time.Time {
	var mu sync.Mutex
	t := Epoch
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// finishParse ends the stream of a parse by p as harness.Parse does: a
// capture's duration is the span of its timestamps where p has them.
func finishParse(s *event.Stream, p adapters.Parser) {
	o := event.Outcome{NoProcess: true}
	if spanned, ok := p.(adapters.NativeSpanned); ok {
		if ms, ok := spanned.NativeSpan(); ok {
			o.NativeSpanMS = &ms
		}
	}
	s.Finish(o)
}

// Normalize runs a native stream through a fresh parser of a, as harness
// parse does, with the test clock and run id, and returns the NDJSON.
func Normalize(a adapters.Adapter, native []byte, raw bool) []byte {
	var out bytes.Buffer
	s := Stream(a, raw, &out)
	p := a.NewParser()
	_ = adapters.Normalize(bytes.NewReader(native), p, s, adapters.NormalizeOptions{})
	finishParse(s, p)
	return out.Bytes()
}

// Stream is a stream of a's events with the test clock and run id,
// encoded into out: what a test that drives a parser by hand (a live
// session's Conversation) emits into.
func Stream(a adapters.Adapter, raw bool, out *bytes.Buffer) *event.Stream {
	enc := event.NewEncoder(out)
	return event.NewStream(event.StreamConfig{
		Run: RunID, Now: Clock(), Raw: raw,
		Start: event.SessionStart{Agent: a.Name()},
		Sink:  func(ev event.Event) { _ = enc.Encode(ev) },
	})
}

// Golden normalizes every dir/*.jsonl with a and compares the result with
// the file's .golden.ndjson twin (rewritten under -update). Every output is
// held to the invariants and the JSON Schema. Every type of want must
// appear in some golden: the captures cover what the adapter emits.
func Golden(t *testing.T, a adapters.Adapter, dir string, want ...event.Type) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no captures in %s", dir)
	seen := map[event.Type]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			native, err := os.ReadFile(f)
			require.NoError(t, err)
			got := Normalize(a, native, strings.Contains(name, ".raw"))
			CheckStream(t, got)
			for _, tp := range Types(t, got) {
				seen[tp] = true
			}
			golden := strings.TrimSuffix(f, ".jsonl") + ".golden.ndjson"
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing golden; run go test -update")
			require.Equal(t, string(want), string(got), "golden mismatch for %s; run go test -update if the change is intended", name)
		})
	}
	for _, tp := range want {
		require.True(t, seen[tp], "no golden has a %s event", tp)
	}
}

// Commander builds command lines: an adapter, or its driver.
type Commander interface {
	Command(binary string, t adapters.Task) (adapters.Command, error)
}

// CommandCase is a task and the command line and environment it must
// give; the prompt is the last argument.
type CommandCase struct {
	Name string
	Task adapters.Task
	Argv []string
	Env  []string
}

// Commands holds c's Command, run with binary, to each case: the exact
// argv and environment, the prompt last (where logs redact it), and no
// stdin (the prompt is on the command line).
func Commands(t *testing.T, c Commander, binary string, cases []CommandCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			cmd, err := c.Command(binary, tc.Task)
			require.NoError(t, err)
			require.Equal(t, tc.Argv, cmd.Argv)
			require.Equal(t, tc.Env, cmd.Env)
			require.Equal(t, len(cmd.Argv)-1, cmd.PromptIndex)
			require.Equal(t, "<prompt>", cmd.RedactedArgv()[cmd.PromptIndex])
			require.Empty(t, cmd.Stdin)
		})
	}
}

// BadTask is a task an adapter must refuse: with an error that is Want
// (when set) and contains Contains (when set).
type BadTask struct {
	Task     adapters.Task
	Want     error
	Contains string
}

// CommandErrors holds c's Command, run with binary, to refusing each bad
// task, by name.
func CommandErrors(t *testing.T, c Commander, binary string, cases map[string]BadTask) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Command(binary, tc.Task)
			require.Error(t, err)
			if tc.Want != nil {
				require.ErrorIs(t, err, tc.Want)
			}
			require.ErrorContains(t, err, tc.Contains)
		})
	}
}

// Types returns the type of each line of an NDJSON stream.
func Types(t testing.TB, ndjson []byte) []event.Type {
	t.Helper()
	evs, err := event.ReadAll(bytes.NewReader(ndjson))
	require.NoError(t, err)
	out := make([]event.Type, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// Schema returns the compiled event schema.
func Schema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() { schema, schemaErr = schemacheck.Compile("schema.json", event.Schema) })
	require.NoError(t, schemaErr)
	return schema
}

// Updating reports the -update flag: goldens are rewritten.
func Updating() bool { return *update }

// CheckStream holds an NDJSON stream to the invariants and validates every
// line against the JSON Schema.
func CheckStream(t testing.TB, ndjson []byte) {
	t.Helper()
	require.NoError(t, event.CheckNDJSON(ndjson))
	sch := Schema(t)
	for i, line := range bytes.Split(bytes.TrimSuffix(ndjson, []byte("\n")), []byte("\n")) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
		require.NoError(t, err, "line %d", i+1)
		require.NoError(t, sch.Validate(doc), "line %d does not match the schema: %s", i+1, line)
	}
}

// Seed adds every dir/*.jsonl to f's corpus, whole and line by line, plus hostile
// inputs every parser must survive.
func Seed(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(line)
		}
		// The whole capture too: what a parser carries from line to line
		// (a diff held to the earlier ones, a tool's start and end) is
		// mutated only in an input of many lines.
		f.Add(data)
	}
	for _, s := range []string{"", "{", "}", "null", "[]", "\"x\"", "{\"type\":null}", "{\"type\":1}",
		"{\"type\":\"\xff\xfe\"}", "not json at all", "{\"type\":\"result\"", "\x00\x00"} {
		f.Add([]byte(s))
	}
	// Values nested far deeper than event.MaxJSONDepth: nothing may walk
	// them recursively (8 million levels overflowed the Go stack).
	deep := DeepJSON(100_000)
	f.Add([]byte(deep))
	f.Add([]byte(`{"type":"x","a":` + deep + `}`))
}

// DeepJSON is an array nested levels deep.
func DeepJSON(levels int) string {
	return strings.Repeat("[", levels) + strings.Repeat("]", levels)
}

// Fuzz runs a fresh parser of a over the input split into lines, and checks
// that the stream it yields holds the invariants. Use it as the fuzz body.
func Fuzz(t *testing.T, a adapters.Adapter, data []byte) {
	out := Normalize(a, data, false)
	if err := event.CheckNDJSON(out); err != nil {
		t.Fatalf("invariants broken for input %q: %v", data, err)
	}
	// adapters.Normalize (lines parsed in batches on a goroutine of its
	// own) gives what a live run's line-by-line Parse gives.
	if live := normalizeLive(a, data); !bytes.Equal(out, live) {
		t.Fatalf("Normalize and Parse line by line differ for input %q:\n%s\n%s", data, out, live)
	}
	// A valid line must also decode into JSON objects only.
	for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("invalid JSON out: %q", line)
		}
	}
}

// FuzzParse is an adapter's fuzz target: its captures (Testdata) as
// seeds, and Fuzz as the body.
func FuzzParse(f *testing.F, a adapters.Adapter) {
	Seed(f, Testdata(a.Name()))
	f.Fuzz(func(t *testing.T, data []byte) { Fuzz(t, a, data) })
}

// normalizeLive is Normalize as a live run does it: each line parsed with
// Parse and given to the stream in turn, on one goroutine.
func normalizeLive(a adapters.Adapter, native []byte) []byte {
	var out bytes.Buffer
	s := Stream(a, false, &out)
	p := a.NewParser()
	var buf []event.Body
	_ = linescan.Scan(bytes.NewReader(native), 0, func(line []byte, dropped int64) error {
		if dropped > 0 {
			s.Emit(adapters.LineTruncated(len(line), dropped))
		}
		var known bool
		buf, known = p.Parse(buf[:0], line)
		s.Line(event.StreamStdout, line, !known, buf)
		return nil
	})
	s.Emit(p.Flush(nil)...)
	finishParse(s, p)
	return out.Bytes()
}

// benchSize is the size of the stream an adapter's benchmarks read.
const benchSize = 4 << 20

// BenchCases is the glob of the testdata cases an agent's benchmarks
// read, as make bench does: Claude's partial-message captures (the mode
// a run uses), every case of the others.
func BenchCases(agent string) string {
	if agent == "claude" {
		return "partial-*"
	}
	return "*"
}

// BenchNormalize times the whole normalization of a's benchmark stream
// (BenchStream of BenchCases) as harness parse does it — parser,
// event.Stream, encoder — with MB/s, allocations and ns/event (wall time
// over the events emitted: the yardstick of issue 25 is ≤ 0.8 µs of CPU
// an event).
func BenchNormalize(b *testing.B, a adapters.Adapter) {
	stream := BenchStream(b, a.Name(), benchSize, BenchCases(a.Name()))
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	b.ResetTimer()
	var events int64
	for b.Loop() {
		enc := event.NewEncoder(io.Discard)
		s := event.NewStream(event.StreamConfig{Run: RunID, Start: event.SessionStart{Agent: a.Name()},
			Sink: func(ev event.Event) { _ = enc.Encode(ev); events++ }})
		_ = adapters.Normalize(bytes.NewReader(stream), a.NewParser(), s, adapters.NormalizeOptions{})
		s.Finish(event.Outcome{NoProcess: true})
	}
	if events > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
	}
}

// BenchParse times the parser alone over the same stream, without
// event.Stream and the encoder.
func BenchParse(b *testing.B, a adapters.Adapter) {
	stream := BenchStream(b, a.Name(), benchSize, BenchCases(a.Name()))
	lines := bytes.Split(stream, []byte("\n"))
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	b.ResetTimer()
	var buf []event.Body
	for b.Loop() {
		p := a.NewParser()
		for _, l := range lines {
			buf, _ = p.Parse(buf[:0], l)
		}
		buf = p.Flush(buf[:0])
	}
}

// Testdata is the directory of an agent's captures.
func Testdata(agent string) string {
	_, self, _, _ := runtime.Caller(0) // adapters/adaptertest/adaptertest.go
	return filepath.Join(filepath.Dir(self), "..", "..", "testdata", agent)
}

// BenchStream builds a native stream of at least size bytes from the
// agent's testdata cases whose names match glob ("*" for all), with fresh
// ids in every repetition, as make bench does (see benchdata.Generate).
func BenchStream(tb testing.TB, agent string, size int64, glob string) []byte {
	tb.Helper()
	cases, err := benchdata.LoadCases(Testdata(agent))
	require.NoError(tb, err)
	cases, err = benchdata.Match(cases, glob)
	require.NoError(tb, err)
	var buf bytes.Buffer
	_, err = benchdata.Generate(&buf, cases, size)
	require.NoError(tb, err)
	require.NotZero(tb, buf.Len(), "empty benchmark stream")
	return buf.Bytes()
}

// BenchPeakHeap normalizes n generated lines (line(text) of about size
// bytes each, text a kilobyte that differs from line to line, never held
// together) as one run and reports the peak heap in use, sampled every
// 5 ms (peak-heap-MiB): what a parser keeps of one huge message must be
// capped, so the heap stays flat whatever n is.
func BenchPeakHeap(b *testing.B, a adapters.Adapter, n, size int, line func(text string) string) {
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			peak.Store(max(peak.Load(), HeapInUse()))
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	b.SetBytes(int64(n * size))
	for b.Loop() {
		s := event.NewStream(event.StreamConfig{Sink: func(event.Event) {}})
		lines := &lineReader{n: n, line: func(i int) string { return line(strconv.Itoa(i) + strings.Repeat("x", 1000)) }}
		_ = adapters.Normalize(lines, a.NewParser(), s, adapters.NormalizeOptions{})
		s.Finish(event.Outcome{NoProcess: true})
	}
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

// BenchHeldHeap parses line n times as one run, then the end lines, and
// reports the heap in use after a GC (MB-heap): what the parser holds of
// the repeated line must not grow with n.
func BenchHeldHeap(b *testing.B, a adapters.Adapter, line []byte, n int, end ...string) {
	var peak uint64
	for b.Loop() {
		p := a.NewParser()
		var buf []event.Body
		for range n {
			buf, _ = p.Parse(buf[:0], line)
		}
		runtime.GC()
		peak = max(peak, HeapInUse())
		for _, l := range end {
			buf, _ = p.Parse(buf[:0], []byte(l))
		}
		runtime.KeepAlive(p)
	}
	b.SetBytes(int64(len(line)) * int64(n))
	b.ReportMetric(float64(peak)/(1<<20), "MB-heap")
}

// HeapInUse is the heap in use now, in bytes.
func HeapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// lineReader reads n generated lines, never holding more than one.
type lineReader struct {
	n, i int
	line func(i int) string
	buf  []byte
}

func (r *lineReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.i == r.n {
			return 0, io.EOF
		}
		r.buf = []byte(r.line(r.i) + "\n")
		r.i++
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// ParseLines runs lines through p, as one run's stdout, and returns every
// body (Flush included) and whether each line was known.
func ParseLines(p adapters.Parser, lines ...string) ([]event.Body, []bool) {
	var out []event.Body
	known := make([]bool, 0, len(lines))
	for _, l := range lines {
		var k bool
		out, k = p.Parse(out, []byte(l))
		known = append(known, k)
	}
	return p.Flush(out), known
}

// Bodies is ParseLines without the known flags.
func Bodies(p adapters.Parser, lines ...string) []event.Body {
	out, _ := ParseLines(p, lines...)
	return out
}

// HostileLines holds a's parser to lines that are huge, deeply nested,
// cut short or not UTF-8, alone and in the middle of each capture in dir:
// no panic, and a valid stream. Lines are accepted without full
// validation, so a parser must read damaged JSON leniently.
func HostileLines(t *testing.T, a adapters.Adapter, dir string) {
	t.Helper()
	big := strings.Repeat(`a\\\"b\\\\`, 10<<20/8)
	deep := strings.Repeat("[", 1<<16) + strings.Repeat("{\"a\":", 1<<14)
	hostile := []string{
		`{"type":"` + big + `"}`,
		`{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"` + big + `"}}`,
		`{"type":"tool_call","subtype":"completed","tool_call":` + deep + `}`,
		`{"type":"message","role":"assistant","content":` + deep + `}`,
		`{"type":"tool_use","part":{"state":` + deep + `}}`,
		`{"type":"tool_use","part":{"tool":"bash","state":{"status":"completed","input":{"command":"\xff\xfe"}}}}`,
		"{\"type\":\"\xff\",\"item\":{\"type\":\"\xc3\"}}",
		`{"type":"text","part":{"text":"x"}} garbage "type":"error"}`,
		`{"item":{"id":"a" "type":}, "type":"item.completed"}`,
		`{"message":{"content":[{"text":"x"}],},"type":"assistant"}`,
		`{}`, `{ }`, `{"`, `{"a"}`, `{"a":}`, `{:}`, `{,}`, `{"type"}`,
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s: %v", dir, err)
	}
	for _, h := range hostile {
		Fuzz(t, a, []byte(h))
	}
	small := hostile[5:]
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cut := small
		for _, line := range strings.Split(string(data), "\n") {
			// Cut every line short at a few places, and close it again.
			for _, n := range []int{len(line) / 3, len(line) / 2, len(line) - 2} {
				if n > 0 && n < len(line) {
					cut = append(cut, line[:n], line[:n]+"}")
				}
			}
		}
		Fuzz(t, a, append(append([]byte(strings.Join(cut, "\n")+"\n"), data...), '\n'))
	}
}

// TwoValuesOnALine checks that a's parser counts unparsed a line that
// holds two of the captures' objects one after the other ("{...}{...}",
// two writers interleaved without a newline): it starts and ends with a
// brace, but the second object is never read, and it was lost without a
// trace.
func TwoValuesOnALine(t *testing.T, a adapters.Adapter, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	tried := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for i := 0; i+1 < len(lines) && tried < 200; i++ {
			if _, known := a.NewParser().Parse(nil, []byte(lines[i])); !known || !strings.HasPrefix(lines[i], "{") || !strings.HasPrefix(lines[i+1], "{") {
				continue
			}
			tried++
			for _, sep := range []string{"", " ", "\t"} {
				_, known := a.NewParser().Parse(nil, []byte(lines[i]+sep+lines[i+1]))
				require.False(t, known, "%s: two objects on a line taken for one:\n%s%s%s", file, lines[i], sep, lines[i+1])
			}
		}
	}
	require.NotZero(t, tried, "no parsed line in the captures of %s", dir)
}

// BodiesOwnTheirStrings checks that the bodies a's parser returns do not
// share the line's memory, which the caller reuses for the next line: the
// captures in dir are parsed from one buffer scribbled over after each
// call, and the bodies must come out as from fresh lines.
func BodiesOwnTheirStrings(t *testing.T, a adapters.Adapter, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		want, _ := ParseLines(a.NewParser(), lines...)
		p := a.NewParser()
		var got []event.Body
		buf := make([]byte, 0, 1<<16)
		for _, l := range lines {
			buf = append(buf[:0], l...)
			got, _ = p.Parse(got, buf)
			for i := range buf[:cap(buf)] {
				buf[:cap(buf)][i] = 'X'
			}
		}
		got = p.Flush(got)
		wantJSON, err := json.Marshal(want)
		require.NoError(t, err)
		gotJSON, err := json.Marshal(got)
		require.NoError(t, err)
		require.Equal(t, string(wantJSON), string(gotJSON), file)
	}
}

// DiffCapture is a capture and the diffs its golden holds.
type DiffCapture struct {
	Name   string           // the capture's file name without .jsonl
	Native []string         // the capture's lines
	Diffs  []*event.ToolEnd // the golden's tool_end events that carry a diff, in stream order
}

// DiffCaptures returns every capture in dir with the diffs of its golden,
// for tests that replay them (ApplyDiff). Some golden must have a diff.
func DiffCaptures(t testing.TB, dir string) []DiffCapture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	require.NoError(t, err)
	var out []DiffCapture
	diffs := 0
	for _, f := range files {
		native, err := os.ReadFile(f)
		require.NoError(t, err)
		golden := strings.TrimSuffix(f, ".jsonl") + ".golden.ndjson"
		data, err := os.ReadFile(golden)
		require.NoError(t, err)
		evs, err := event.ReadAll(bytes.NewReader(data))
		require.NoError(t, err, golden)
		c := DiffCapture{Name: strings.TrimSuffix(filepath.Base(f), ".jsonl"), Native: strings.Split(string(native), "\n")}
		for _, ev := range evs {
			if te, ok := ev.Body.(*event.ToolEnd); ok && te.Diff != "" {
				c.Diffs = append(c.Diffs, te)
			}
		}
		diffs += len(c.Diffs)
		out = append(out, c)
	}
	require.Positive(t, diffs, "no golden in %s has a diff", dir)
	return out
}

// GitApply applies diff to the files in dir as a user would, with git
// apply (paths a/ and b/), and fails t when git refuses it.
func GitApply(t testing.TB, dir, diff string) {
	t.Helper()
	_, err := exec.LookPath("git")
	require.NoError(t, err, "git is needed to check the diffs")
	cmd := exec.Command("git", "apply", "-")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(diff)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git apply: %s\n%s", out, diff)
}

// ApplyDiff checks one diff of a stream against what the native lines
// state of the files: it writes the files of before into dir (paths
// relative to dir, a nil content removes the file), applies diff there
// (GitApply), and checks the files of after (nil: the file is gone).
func ApplyDiff(t testing.TB, dir, diff string, before, after map[string]*string) {
	t.Helper()
	for path, text := range before {
		file := filepath.Join(dir, path)
		if text == nil {
			require.NoError(t, os.RemoveAll(file))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(*text), 0o644))
	}
	GitApply(t, dir, diff)
	for path, want := range after {
		got, err := os.ReadFile(filepath.Join(dir, path))
		if want == nil {
			require.ErrorIs(t, err, os.ErrNotExist, "%s is gone after\n%s", path, diff)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, *want, string(got), "%s after\n%s", path, diff)
	}
}

// HeapAfterGC is the heap allocated after a collection: what a test of
// retained memory compares before and after (run it alone, not parallel).
func HeapAfterGC() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// HeldCalls is how many tool calls OpenCallsHeld opens.
const HeldCalls = 60

// OpenCallsHeld feeds p and a Stream HeldCalls lines, line(i, text) each
// opening one tool call, left open, whose input carries text (1 MiB of
// JSON-escaped lines); it fails t when the open calls hold 16 MiB or
// more of the heap: they must keep only what their events carry, not the
// lines. each, if not nil, sees every line's one event. Run it alone (not
// parallel): it measures what is retained, not how fast.
func OpenCallsHeld(t *testing.T, p adapters.Parser, line func(i int, text string) string, each func(b event.Body, line string)) {
	t.Helper()
	text := strings.Repeat(strings.Repeat("x", 79)+`\n`, (1<<20)/80)
	s := event.NewStream(event.StreamConfig{Sink: func(event.Event) {}})
	before := HeapAfterGC()
	var buf []event.Body
	for i := range HeldCalls {
		l := line(i, text)
		buf, _ = p.Parse(buf[:0], []byte(l))
		require.Len(t, buf, 1)
		if each != nil {
			each(buf[0], l)
		}
		require.NoError(t, s.Line(event.StreamStdout, []byte(l), false, buf))
		clear(buf)
	}
	require.Len(t, s.OpenCalls(), HeldCalls)
	held := HeapAfterGC() - before
	t.Logf("%d open calls hold %.1f MB", HeldCalls, float64(held)/1e6)
	require.Less(t, held, int64(16<<20), "the open calls hold %d MB", held>>20)
	runtime.KeepAlive(p)
	runtime.KeepAlive(s)
}

// FullStdin is a session agent's stdin that takes N writes, then refuses
// every one as the queue in front of a stdin nobody reads does
// (process.ErrStdinFull).
type FullStdin struct{ N, Took int }

func (f *FullStdin) Write(b []byte) (int, error) {
	if f.Took >= f.N {
		return 0, fmt.Errorf("%w: %d bytes queued unread", process.ErrStdinFull, process.MaxStdinQueue)
	}
	f.Took++
	return len(b), nil
}
