package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentharness/harness/internal/fakeagent"
)

// liveCase is one live-view measurement: who starts the run, how many
// clients follow it, how many lines a second the agent writes.
type liveCase struct {
	figure  string
	byServe bool // started through POST /api/runs, else by a separate `harness run`
	clients int
	lines   int
	every   time.Duration
	target  float64 // p99, ms
}

// liveView measures the live view end to end, as a user watches it: the
// time from the latency-stamp fake writing a line to each SSE client of
// a `harness serve` process reading the event that carries it (both
// CLOCK_MONOTONIC), for a run a separate `harness run` writes (the
// README's workflow: the server only sees the disk) and a run the server
// started itself; with one client, and with 100 at 1000 lines a second.
// Lines written before every client was connected (plus a 100 ms margin)
// are left out: they reach a client as a replay, not live.
func (b *bench) liveView() []row {
	n := b.sz.LiveLines
	cases := []liveCase{
		{"live view, run of a separate harness run: line → client", false, 1, n, time.Millisecond, 5},
		{"live view, run started by serve: line → client", true, 1, n, time.Millisecond, 5},
		{"live view, run of a separate harness run: 100 clients at 1000 lines/s", false, 100, n, time.Millisecond, 10},
		{"live view, run started by serve: 100 clients at 1000 lines/s", true, 100, n, time.Millisecond, 10},
	}
	var rows []row
	for _, c := range cases {
		var p50s, p99s, maxs, rates []float64
		var err error
		for i := range b.sz.LiveRuns {
			b.log("%s: run %d/%d, %d lines", c.figure, i+1, b.sz.LiveRuns, c.lines)
			var s liveSample
			if s, err = b.liveRun(c); err != nil {
				break
			}
			p50s, p99s, maxs, rates = append(p50s, s.P50), append(p99s, s.P99), append(maxs, s.Max), append(rates, s.Rate)
		}
		target := fmt.Sprintf("p99 ≤ %g ms", c.target)
		if err != nil {
			rows = append(rows, failedRow(c.figure, target, err))
			continue
		}
		p99 := median(p99s)
		rows = append(rows, row{Figure: c.figure,
			Value:     fmt.Sprintf("p50 %.2f ms, p99 %.2f ms", median(p50s), p99),
			Reference: fmt.Sprintf("max %.1f ms; %.0f lines/s written", median(maxs), median(rates)),
			Ratio:     fmt.Sprintf("medians of %d runs", len(p99s)),
			Target:    target, Met: metStr(p99 <= c.target)})
	}
	return rows
}

// liveSample is one live-view run's percentiles over every client and
// line, in milliseconds, and the lines a second the fake wrote.
type liveSample struct{ P50, P99, Max, Rate float64 }

// liveRun serves a fresh session directory with `harness serve`, starts
// the run, follows it with c.clients SSE clients to its end and returns
// their latencies.
func (b *bench) liveRun(c liveCase) (liveSample, error) {
	dir := filepath.Join(b.tmp, "live")
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "config", "harness"), 0o700); err != nil {
		return liveSample{}, err
	}
	defer os.RemoveAll(dir)
	// The server's runs start the fake: a config of its own, so the other
	// rows keep theirs.
	cfg := fmt.Sprintf("[agents.claude]\nbinary = %q\n", b.fake)
	if err := os.WriteFile(filepath.Join(dir, "config", "harness", "config.toml"), []byte(cfg), 0o600); err != nil {
		return liveSample{}, err
	}
	spec := fmt.Sprintf("latency-stamp %d %s", c.lines, c.every)
	env := append(b.fakeEnv(spec), "HARNESS_LOG_DIR="+filepath.Join(dir, "sessions"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	token := filepath.Join(dir, "token")
	srv, addr, err := startServe(b.harness, env, b.tmp, token)
	if err != nil {
		return liveSample{}, err
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGINT)
		_ = srv.Wait()
	}()
	base := "http://" + addr
	var run *exec.Cmd
	var id string
	if c.byServe {
		id, err = startServeRun(base, token)
	} else {
		run = exec.Command(b.harness, b.withLog()[1:]...)
		run.Env, run.Dir = env, b.tmp
		if err = run.Start(); err == nil {
			defer run.Wait()
			id, err = latestRun(base)
		}
	}
	if err != nil {
		return liveSample{}, err
	}
	lat, err := followClients(base+"/api/runs/"+id+"/events", c.clients)
	if run != nil {
		if werr := run.Wait(); werr != nil && err == nil {
			err = fmt.Errorf("harness run: %v", werr)
		}
	}
	if err != nil {
		return liveSample{}, err
	}
	var all []float64
	var first, last int64
	for _, l := range lat {
		all = append(all, l.ms...)
		if first == 0 || (l.first > 0 && l.first < first) {
			first = l.first
		}
		last = max(last, l.last)
	}
	if len(all) == 0 {
		return liveSample{}, errors.New("no line arrived live: the run was over before the clients connected")
	}
	rate := float64(c.lines) / (float64(last-first) / 1e9)
	return liveSample{P50: percentile(all, 50), P99: percentile(all, 99), Max: percentile(all, 100), Rate: rate}, nil
}

// startServe starts `harness serve` on a free loopback port and returns
// it and its address, read from its first line on stderr.
func startServe(harness string, env []string, dir, token string) (*exec.Cmd, string, error) {
	cmd := exec.Command(harness, "serve", "--listen", "127.0.0.1:0", "--token-file", token)
	cmd.Env, cmd.Dir = env, dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	br := bufio.NewReader(stderr)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, "", fmt.Errorf("harness serve: no address on stderr: %q", line)
		}
		if rest, ok := strings.CutPrefix(line, "harness serve: http://"); ok {
			go func() { _, _ = io.Copy(io.Discard, br) }()
			return cmd, strings.TrimSuffix(strings.TrimSpace(rest), "/"), nil
		}
	}
}

// startServeRun starts a run of the fake through the API.
func startServeRun(base, tokenFile string) (string, error) {
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", err
	}
	req, _ := http.NewRequest("POST", base+"/api/runs", strings.NewReader(`{"agent":"claude","prompt":"bench"}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var out struct {
		Run   string `json:"run"`
		Error string `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("POST /api/runs: %s: %s", res.Status, out.Error)
	}
	return out.Run, nil
}

// latestRun waits for the separate run to appear in the server's list,
// running (its meta written), as a user finds it.
func latestRun(base string) (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(base + "/api/runs?limit=1")
		if err != nil {
			return "", err
		}
		var page struct {
			Runs []struct {
				Run    string `json:"run"`
				Status string `json:"status"`
			} `json:"runs"`
		}
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err == nil && len(page.Runs) > 0 && page.Runs[0].Status == "running" {
			return page.Runs[0].Run, nil
		}
		time.Sleep(2 * time.Millisecond) // polling a process we do not control
	}
	return "", errors.New("the run did not appear in GET /api/runs within 10 s")
}

// clientLat is what one client saw: the latency of each stamped line
// written after every client was connected, and the first and last
// stamps of all (for the line rate).
type clientLat struct {
	ms          []float64
	first, last int64
}

// followClients opens n SSE streams of url and reads each to its end
// event.
func followClients(url string, n int) ([]clientLat, error) {
	out := make([]clientLat, n)
	errs := make([]error, n)
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	var from int64 // stamps before this are replayed, not live
	start := make(chan struct{})
	for i := range n {
		go func() {
			defer done.Done()
			res, err := http.Get(url)
			ready.Done()
			if err != nil {
				errs[i] = err
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				errs[i] = fmt.Errorf("GET events: %s", res.Status)
				return
			}
			<-start
			errs[i] = readLive(res.Body, from, &out[i])
		}()
	}
	ready.Wait()
	from = fakeagent.MonotonicNS() + int64(100*time.Millisecond)
	close(start)
	done.Wait()
	return out, errors.Join(errs...)
}

// readLive reads an SSE stream to its end event. A stamp at or below the
// last one seen is one seen again (see readStamps). The reader allocates
// nothing per line and makes no system call but its reads: it shares the
// machine's CPUs with the server it measures.
func readLive(r io.Reader, from int64, l *clientLat) error {
	br := bufio.NewReaderSize(r, 64<<10)
	last := int64(-1)
	for {
		line, err := br.ReadSlice('\n')
		now := fakeagent.MonotonicNS()
		if bytes.HasPrefix(line, []byte("event: end")) {
			return nil
		}
		if seq, ns, ok := parseStamp(line); ok && bytes.HasPrefix(line, []byte("data: ")) && seq > last {
			last = seq
			if l.first == 0 {
				l.first = ns
			}
			l.last = ns
			if ns >= from {
				l.ms = append(l.ms, float64(now-ns)/1e6)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return fmt.Errorf("the stream ended without its end event: %v", err)
		}
	}
}
