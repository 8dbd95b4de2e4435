package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// writeStore writes n finished runs (meta and a short event log each) as
// a store of months of use holds them.
func writeStore(b *testing.B, dir string, n int) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("run_01LIST%020d", i)
		at := start.Add(time.Duration(i) * time.Minute)
		meta := fmt.Sprintf(`{"run":%q,"agent":"claude","model":"sonnet","prompt_preview":"fix the test %d","cwd":"/work","start":%q,"end":%q,"status":"success","harness_version":"dev"}`,
			id, i, at.Format(time.RFC3339Nano), at.Add(time.Minute).Format(time.RFC3339Nano))
		ms := at.UnixMilli()
		log := fmt.Sprintf(`{"v":1,"type":"session_start","run":%[1]q,"seq":1,"ts":%[2]d,"agent":"claude","model":"sonnet","cwd":"/work","pty":false,"argv":[]}
{"v":1,"type":"tool_start","run":%[1]q,"seq":2,"ts":%[2]d,"call_id":"c1","name":"Bash","kind":"shell","input":{},"command":"ls"}
{"v":1,"type":"tool_end","run":%[1]q,"seq":3,"ts":%[2]d,"call_id":"c1","name":"Bash","kind":"shell","status":"ok","exit_code":0,"duration_ms":4}
{"v":1,"type":"result","run":%[1]q,"seq":4,"ts":%[2]d,"status":"success","text":"done","duration_ms":60000,"usage":{"input_tokens":100,"output_tokens":20},"stats":{"native_lines":4,"unparsed_lines":0,"events":4,"tool_calls":1}}
`, id, ms)
		if err := os.WriteFile(filepath.Join(dir, id+".meta.json"), []byte(meta), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id+".ndjson"), []byte(log), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListRuns20k: GET /api/runs (the page's poll, 200 runs) on a
// store of 20,000 finished runs, after a first listing. LIST_BENCH_FRESH=1
// measures a directory changed in the last seconds (read again each time).
func BenchmarkListRuns20k(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "sessions")
	writeStore(b, dir, 20_000)
	if os.Getenv("LIST_BENCH_FRESH") == "" {
		// A store that settled: the last run was written a minute ago.
		old := time.Now().Add(-time.Minute)
		if err := os.Chtimes(dir, old, old); err != nil {
			b.Fatal(err)
		}
	}
	s := New(Config{Dir: dir, Open: true})
	get := func() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/api/runs", nil))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
	get()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		get()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/list")
	// The machine's load moves the wall time; the CPU spent does not move much.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/list")
}

// cpuTime is the user and system time this process has spent.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
