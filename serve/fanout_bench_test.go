package serve

import (
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/logger"
)

// BenchmarkLiveFanout: 100 SSE subscribers on one run written at 1000
// lines a second (a line every millisecond, not waiting for the
// clients), by this server's run (its observer wakes the readers) and by
// another process (the server learns of it from the disk alone); the
// time from a line's write to each client reading it. Not asserted: the
// end-to-end figures are internal/perf's live view rows.
func BenchmarkLiveFanout(b *testing.B) {
	for _, mode := range []string{"hook", "external"} {
		b.Run(mode, func(b *testing.B) { liveFanout(b, mode == "hook", 100, 1000) })
	}
}

func liveFanout(b *testing.B, hook bool, clients, lines int) {
	for range b.N {
		dir := b.TempDir()
		s := New(Config{Dir: dir, Open: true})
		var obs harness.Observer
		lr := newLiveRun(nil)
		if hook {
			s.live[benchRun] = lr
			obs = lr.observer()
		}
		sess := openBenchLog(b, dir, obs)
		hs := httptest.NewServer(s)
		sess.write(benchLine(1, "session_start", "0"))
		lat := make([][]time.Duration, clients)
		wait := subscribe(b, hs.URL+"/api/runs/"+benchRun+"/events", clients, func(c int, d []byte) {
			if sent := sentAt(d); sent > 0 {
				lat[c] = append(lat[c], time.Duration(time.Now().UnixNano()-sent))
			}
		})
		cpu0 := cpuTime()
		tick := time.NewTicker(time.Second / time.Duration(lines))
		for i := range lines {
			<-tick.C
			sess.write(benchLine(int64(i+2), "text_delta", strconv.FormatInt(time.Now().UnixNano(), 10)))
		}
		tick.Stop()
		sess.write(benchLine(int64(lines+2), "result", "0"))
		sess.Close(logger.Meta{Status: "success"})
		lr.finish()
		wait()
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(lines), "cpu-µs/line")
		hs.Close()
		all := slices.Concat(lat...)
		slices.Sort(all)
		if len(all) > 0 {
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
		}
	}
}
