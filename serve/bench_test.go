package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/logger"
)

// The figures of docs/serve.md, from `make bench`: not asserted.

const benchRun = "run_01BENCH0000000000000000000"

// benchLog is a run's session log written as the library writes it:
// buffered, each line followed by a flush, the observer (a live run's,
// or none) told after the log.
type benchLog struct {
	*logger.Session
	obs harness.Observer
}

func openBenchLog(b *testing.B, dir string, obs harness.Observer) benchLog {
	sess, err := logger.Open(dir, benchRun, logger.Meta{Agent: "claude"}, logger.WithRedactor(logger.NewRedactor(nil)), logger.WithBufferedEvents())
	if err != nil {
		b.Fatal(err)
	}
	return benchLog{sess, obs}
}

// write logs one line and flushes, as the library does with an agent's
// line that made one event.
func (l benchLog) write(line []byte) {
	l.WriteEvent(line)
	if l.obs.OnLine != nil {
		l.obs.OnLine(line)
	}
	l.Flush()
	if l.obs.Flush != nil {
		l.obs.Flush()
	}
}

func benchLine(seq int64, typ, text string) []byte {
	return fmt.Appendf(nil, `{"v":1,"type":%q,"run":%q,"seq":%d,"ts":%d,"text":%q,"message_id":"msg_bench"}`,
		typ, benchRun, seq, time.Now().UnixMilli(), text)
}

// sentAt reads the stamp a benchLine carries in its text (0 for none),
// without allocating: the clients of the fan-out benchmarks share the
// server's process, and their garbage would be counted as its.
func sentAt(d []byte) int64 {
	i := bytes.Index(d, []byte(`"text":"`))
	if i < 0 {
		return 0
	}
	var n int64
	for _, c := range d[i+8:] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// subscribe opens n SSE streams of run and calls fn with each data line
// each of them receives; it returns when every stream is open.
func subscribe(b *testing.B, url string, n int, fn func(client int, data []byte)) (wait func()) {
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	for c := range n {
		go func() {
			defer done.Done()
			res, err := http.Get(url)
			if err != nil {
				b.Error(err)
				ready.Done()
				return
			}
			defer res.Body.Close()
			ready.Done()
			br := bufio.NewReaderSize(res.Body, 64<<10)
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
					fn(c, d)
				}
			}
		}()
	}
	ready.Wait()
	return done.Wait
}

// BenchmarkSSEFanout: 100 SSE subscribers on one live run; the time from
// the line being written to the session log (what the library does with
// each event of an agent line) to each client reading it, p99 over all
// lines and clients.
func BenchmarkSSEFanout(b *testing.B) {
	const clients = 100
	dir := b.TempDir()
	s := New(Config{Dir: dir, Open: true})
	lr := newLiveRun(nil)
	s.live[benchRun] = lr
	sess := openBenchLog(b, dir, lr.observer())
	hs := httptest.NewServer(s)
	defer hs.Close()
	sess.write(benchLine(1, "session_start", "0"))

	var mu sync.Mutex
	lat := make([]time.Duration, 0, clients*(b.N+1))
	got := make(chan struct{}, clients)
	wait := subscribe(b, hs.URL+"/api/runs/"+benchRun+"/events", clients, func(_ int, d []byte) {
		sent := sentAt(d)
		if sent == 0 {
			return
		}
		now := time.Now().UnixNano()
		mu.Lock()
		lat = append(lat, time.Duration(now-sent))
		mu.Unlock()
		got <- struct{}{}
	})
	b.ResetTimer()
	for i := range b.N {
		sess.write(benchLine(int64(i+2), "text_delta", strconv.FormatInt(time.Now().UnixNano(), 10)))
		for range clients {
			<-got
		}
	}
	b.StopTimer()
	sess.write(benchLine(int64(b.N+2), "result", "0"))
	wait()
	sess.Close(logger.Meta{Status: "success"})
	lr.finish()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	}
}

// writeSession writes a finished session of n events.
func writeSession(b *testing.B, dir string, n int) {
	sess, err := logger.Open(dir, benchRun, logger.Meta{Agent: "claude"}, logger.WithRedactor(logger.NewRedactor(nil)))
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("a realistic delta of text ", 4)
	for i := 1; i < n; i++ {
		sess.WriteEvent(benchLine(int64(i), "text_delta", text))
	}
	sess.WriteEvent(benchLine(int64(n), "result", "done"))
	sess.Close(logger.Meta{Status: "success"})
}

// BenchmarkReplay100k: a client resuming a finished 100,000-event run
// from Last-Event-ID: 1 reads the rest of it and the end.
func BenchmarkReplay100k(b *testing.B) {
	dir := b.TempDir()
	writeSession(b, dir, 100_000)
	hs := httptest.NewServer(New(Config{Dir: dir, Open: true}))
	defer hs.Close()
	b.ResetTimer()
	for range b.N {
		req, _ := http.NewRequest("GET", hs.URL+"/api/runs/"+benchRun+"/events", nil)
		req.Header.Set("Last-Event-ID", "1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		b.SetBytes(n)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/replay")
}

// serverEnv makes the test binary a bare `harness serve` of a directory,
// for measuring the server's own memory.
const serverEnv = "HARNESS_SERVE_BENCH_DIR"

// init, before any TestMain: a re-executed test binary serves and exits.
func init() {
	if dir := os.Getenv(serverEnv); dir != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.Exit(1)
		}
		fmt.Println(ln.Addr())
		http.Serve(ln, New(Config{Dir: dir, Open: true, Poll: 20 * time.Millisecond}))
		os.Exit(0)
	}
}

// BenchmarkServeRSS: the resident memory of a server process with 100 SSE
// subscribers following a run another process writes (2,000 events).
func BenchmarkServeRSS(b *testing.B) {
	const clients = 100
	for range b.N {
		dir := b.TempDir()
		exe, _ := os.Executable()
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), serverEnv+"="+dir)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		addr, _ := bufio.NewReader(out).ReadString('\n')
		addr = strings.TrimSpace(addr)
		sess, err := logger.Open(dir, benchRun, logger.Meta{Agent: "claude"}, logger.WithRedactor(logger.NewRedactor(nil)))
		if err != nil {
			b.Fatal(err)
		}
		sess.WriteEvent(benchLine(1, "session_start", "x"))
		var count sync.WaitGroup
		const events = 2000
		count.Add(clients)
		seen := make([]int, clients)
		wait := subscribe(b, "http://"+addr+"/api/runs/"+benchRun+"/events", clients, func(c int, _ []byte) {
			seen[c]++
			if seen[c] == events {
				count.Done()
			}
		})
		text := strings.Repeat("a realistic delta of text ", 4)
		for i := 2; i < events; i++ {
			sess.WriteEvent(benchLine(int64(i), "text_delta", text))
		}
		sess.WriteEvent(benchLine(events, "result", "done"))
		count.Wait()
		hwm := procStatus(cmd.Process.Pid, "VmHWM:")
		rss := procStatus(cmd.Process.Pid, "VmRSS:")
		wait()
		sess.Close(logger.Meta{Status: "success"})
		cancel()
		cmd.Wait()
		b.ReportMetric(rss/1024, "rss-MB")
		b.ReportMetric(hwm/1024, "peak-rss-MB")
	}
}

// procStatus reads a kB figure of /proc/<pid>/status.
func procStatus(pid int, key string) float64 {
	data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseFloat(f[0], 64)
				return n
			}
		}
	}
	return 0
}
