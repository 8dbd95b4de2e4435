package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/agentharness/harness/internal/fakeagent"
)

// latSample is one latency run's percentiles, in milliseconds.
type latSample struct{ P50, P99, Max float64 }

// latency measures arrival − stamp of the latency-stamp fake's lines read
// from `harness run`'s stdout, against the fake piped straight to this
// process, as interleaved pairs (the order alternating): the added
// latency is the median of the pairs' differences, percentile by
// percentile.
func (b *bench) latency() []row {
	spec := fmt.Sprintf("latency-stamp %d 100us", b.sz.LatLines)
	var through, direct, add50, add99 []float64
	var maxes []float64
	for i := range b.sz.LatRuns {
		b.log("latency pair %d/%d: %d lines", i+1, b.sz.LatRuns, b.sz.LatLines)
		var h, d latSample
		var herr, derr error
		if i%2 == 0 {
			h, herr = b.latencyRun(b.harnessRun(), spec)
			d, derr = b.latencyRun([]string{b.fake}, spec)
		} else {
			d, derr = b.latencyRun([]string{b.fake}, spec)
			h, herr = b.latencyRun(b.harnessRun(), spec)
		}
		if err := errors.Join(herr, derr); err != nil {
			return latencyFailed(err)
		}
		through, direct = append(through, h.P50, h.P99), append(direct, d.P50, d.P99)
		add50, add99, maxes = append(add50, h.P50-d.P50), append(add99, h.P99-d.P99), append(maxes, h.Max, d.Max)
	}
	every := func(xs []float64, from int) []float64 {
		var out []float64
		for i := from; i < len(xs); i += 2 {
			out = append(out, xs[i])
		}
		return out
	}
	a50, a99 := median(add50), median(add99)
	b.notes = append(b.notes, fmt.Sprintf("added latency: %d lines %s apart, %d interleaved pairs of runs (through harness, piped directly); max through harness %.3f ms, piped directly %.3f ms (medians). The targets are judged on the median of the pairs' differences.",
		b.sz.LatLines, "100 µs", b.sz.LatRuns, median(every(maxes, 0)), median(every(maxes, 1))))
	return []row{
		{Figure: "added latency p50", Value: fmt.Sprintf("%.3f ms", median(every(through, 0))), Reference: fmt.Sprintf("%.3f ms piped directly", median(every(direct, 0))),
			Ratio: fmt.Sprintf("%+.3f ms (median of %d pairs)", a50, len(add50)), Target: "added ≤ 0.2 ms", Met: metStr(a50 <= 0.2)},
		{Figure: "added latency p99", Value: fmt.Sprintf("%.3f ms", median(every(through, 1))), Reference: fmt.Sprintf("%.3f ms piped directly", median(every(direct, 1))),
			Ratio: fmt.Sprintf("%+.3f ms (median of %d pairs)", a99, len(add99)), Target: "added ≤ 0.5 ms", Met: metStr(a99 <= 0.5)},
	}
}

func latencyFailed(err error) []row {
	return []row{failedRow("added latency p50", "added ≤ 0.2 ms", err), failedRow("added latency p99", "added ≤ 0.5 ms", err)}
}

// latencyRun runs argv with the fake set to spec and reads its stdout.
func (b *bench) latencyRun(argv []string, spec string) (latSample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = b.fakeEnv(spec)
	cmd.Dir = b.tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return latSample{}, err
	}
	if err := cmd.Start(); err != nil {
		return latSample{}, err
	}
	lat, rerr := readStamps(out)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return latSample{}, fmt.Errorf("%v: %s", err, lastLines(stderr.String(), 3))
	}
	if rerr != nil {
		return latSample{}, rerr
	}
	if len(lat) != b.sz.LatLines {
		return latSample{}, fmt.Errorf("read %d stamped lines, want %d", len(lat), b.sz.LatLines)
	}
	return latSample{P50: percentile(lat, 50), P99: percentile(lat, 99), Max: percentile(lat, 100)}, nil
}

// readStamps reads lines and returns, per stamp seen the first time, the
// milliseconds between its stamp and the line's arrival. Stamps come in
// the order of their seqs (the fake writes them so, the events keep it):
// a stamp at or below the last one seen is one seen again.
func readStamps(r io.Reader) ([]float64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	last := int64(-1)
	var lat []float64
	for {
		line, err := br.ReadSlice('\n')
		now := fakeagent.MonotonicNS()
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // a long line carries no stamp
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if len(line) > 0 {
			if seq, ns, ok := parseStamp(line); ok && seq > last {
				last = seq
				lat = append(lat, float64(now-ns)/1e6)
			}
		}
		if err == io.EOF {
			return lat, nil
		}
		if err != nil {
			return lat, err
		}
	}
}

// parseStamp finds "lat:SEQ:NS" in a line. It allocates nothing: the live
// view's readers call it for each line of 100 streams, in the process
// whose timing they measure.
func parseStamp(line []byte) (seq, ns int64, ok bool) {
	i := bytes.Index(line, []byte(fakeagent.StampPrefix))
	if i < 0 {
		return 0, 0, false
	}
	rest := line[i+len(fakeagent.StampPrefix):]
	seq, rest, ok = digits(rest)
	if !ok || len(rest) == 0 || rest[0] != ':' {
		return 0, 0, false
	}
	ns, _, ok = digits(rest[1:])
	return seq, ns, ok
}

// digits reads the decimal number b starts with (at most 18 digits, so it
// fits an int64) and returns what follows it.
func digits(b []byte) (n int64, rest []byte, ok bool) {
	k := 0
	for k < len(b) && k < 18 && b[k] >= '0' && b[k] <= '9' {
		n = n*10 + int64(b[k]-'0')
		k++
	}
	return n, b[k:], k > 0
}

// rssAt is the turn after which the session's first resident set is read.
const rssAt = 20

// session measures a live session: `harness session` over stream-json
// with the claude-stream fake in its stamp mode, one prompt at a time for
// SessTurns turns. Latency is from just before a prompt is written on
// harness's stdin to the fake reading it on its own (the fake's answer
// carries the time it read it; CLOCK_MONOTONIC is the machine's), every
// turn's but the first, which waits for the agent's start. The
// resident set of harness is read after rssAt turns and after the last:
// a session keeps nothing per turn, so it must not grow with them.
func (b *bench) session() []row {
	n := b.sz.SessTurns
	fig50, fig99 := "session: prompt on stdin → agent's stdin p50", "session: prompt on stdin → agent's stdin p99"
	figRSS := fmt.Sprintf("session: RSS after %d turns (fake agent)", n)
	const t50, t99, tRSS = "≤ 1 ms", "≤ 5 ms", "flat: ≤ 1.10× the RSS after 20 turns"
	b.log("session: %d turns over stream-json", n)
	lat, rss20, rssEnd, err := b.sessionRun(n)
	if err != nil {
		return []row{failedRow(fig50, t50, err), failedRow(fig99, t99, err), failedRow(figRSS, tRSS, err)}
	}
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	ref := fmt.Sprintf("%d turns of one process, one prompt at a time (the first left out)", n)
	growth := rssEnd / rss20
	return []row{
		{Figure: fig50, Value: fmt.Sprintf("%.3f ms", p50), Reference: ref, Ratio: "—", Target: t50, Met: metStr(p50 <= 1)},
		{Figure: fig99, Value: fmt.Sprintf("%.3f ms", p99), Reference: ref, Ratio: "—", Target: t99, Met: metStr(p99 <= 5)},
		{Figure: figRSS, Value: fmt.Sprintf("%.1f MB", rssEnd), Reference: fmt.Sprintf("%.1f MB after %d turns", rss20, rssAt),
			Ratio: fmt.Sprintf("%.2f×", growth), Target: tRSS, Met: metStr(growth <= 1.10)},
	}
}

// sessionRun runs the session of n turns and returns each turn's prompt
// latency in ms and harness's RSS in MB after rssAt turns and at the end.
func (b *bench) sessionRun(n int) (lat []float64, rss20, rssEnd float64, err error) {
	if n <= rssAt {
		return nil, 0, 0, fmt.Errorf("%d turns: want more than %d", n, rssAt)
	}
	cmd := exec.Command(b.harness, "session", "--no-log", "--agent", "claude", "--protocol", "stream-json",
		"--binary", b.fake, "--idle-timeout", "60s")
	cmd.Env = append(b.fakeEnv(fakeagent.ClaudeStream), fakeagent.ClaudeStreamMode+"=stamp")
	cmd.Dir = b.tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, 0, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for i := 1; i <= n && err == nil; i++ {
		sent := fakeagent.MonotonicNS()
		if _, err = fmt.Fprintf(in, "{\"type\":\"prompt\",\"text\":\"turn %d\"}\n", i); err != nil {
			break
		}
		var read int64
		if read, err = turnStamp(sc); err != nil {
			break
		}
		if i > 1 { // the first prompt waits for the agent's start
			lat = append(lat, float64(read-sent)/1e6)
		}
		if i == rssAt {
			rss20, err = rssMB(cmd.Process.Pid)
		}
	}
	if err == nil {
		rssEnd, err = rssMB(cmd.Process.Pid)
	}
	in.Close()
	_, _ = io.Copy(io.Discard, out)
	if werr := cmd.Wait(); werr != nil {
		err = errors.Join(err, fmt.Errorf("%v: %s", werr, lastLines(stderr.String(), 3)))
	}
	return lat, rss20, rssEnd, err
}

// turnStamp reads the stream up to the next turn_end and returns the time
// its answer ("recv NS") says the fake read the prompt.
func turnStamp(sc *bufio.Scanner) (int64, error) {
	for sc.Scan() {
		var ev struct{ Type, Status, Text string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "turn_end" {
			continue
		}
		ns, ok := strings.CutPrefix(ev.Text, "recv ")
		v, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil || ev.Status != "success" {
			return 0, fmt.Errorf("a turn ended %s with %q", ev.Status, ev.Text)
		}
		return v, nil
	}
	return 0, fmt.Errorf("the session's stream ended before its turn did (%v)", sc.Err())
}
