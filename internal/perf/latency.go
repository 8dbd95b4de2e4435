package main

import (
	"bufio"
	"bytes"
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
// process.
func (b *bench) latency() []row {
	spec := fmt.Sprintf("latency-stamp %d 100us", b.sz.LatLines)
	var through, direct []latSample
	for i := range b.sz.LatRuns {
		b.log("latency run %d/%d: %d lines", i+1, b.sz.LatRuns, b.sz.LatLines)
		d, err := b.latencyRun([]string{b.fake}, spec)
		if err != nil {
			return latencyFailed(fmt.Errorf("fake alone: %w", err))
		}
		h, err := b.latencyRun(b.harnessRun(), spec)
		if err != nil {
			return latencyFailed(fmt.Errorf("through harness: %w", err))
		}
		direct, through = append(direct, d), append(through, h)
	}
	pick := func(s []latSample, f func(latSample) float64) float64 {
		xs := make([]float64, len(s))
		for i, x := range s {
			xs[i] = f(x)
		}
		return median(xs)
	}
	p50 := func(s latSample) float64 { return s.P50 }
	p99 := func(s latSample) float64 { return s.P99 }
	mx := func(s latSample) float64 { return s.Max }
	h50, h99, hmax := pick(through, p50), pick(through, p99), pick(through, mx)
	d50, d99, dmax := pick(direct, p50), pick(direct, p99), pick(direct, mx)
	b.notes = append(b.notes, fmt.Sprintf("added latency: %d lines %s apart, median of %d runs; max through harness %.3f ms, piped directly %.3f ms. The target is judged on the latency through harness itself, pipe included.",
		b.sz.LatLines, "100 µs", b.sz.LatRuns, hmax, dmax))
	return []row{
		{Figure: "added latency p50", Value: fmt.Sprintf("%.3f ms", h50), Reference: fmt.Sprintf("%.3f ms piped directly", d50),
			Ratio: fmt.Sprintf("%+.3f ms", h50-d50), Target: "≤ 0.2 ms", Met: metStr(h50 <= 0.2)},
		{Figure: "added latency p99", Value: fmt.Sprintf("%.3f ms", h99), Reference: fmt.Sprintf("%.3f ms piped directly", d99),
			Ratio: fmt.Sprintf("%+.3f ms", h99-d99), Target: "≤ 1 ms", Met: metStr(h99 <= 1)},
	}
}

func latencyFailed(err error) []row {
	return []row{failedRow("added latency p50", "≤ 0.2 ms", err), failedRow("added latency p99", "≤ 1 ms", err)}
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
// milliseconds between its stamp and the line's arrival.
func readStamps(r io.Reader) ([]float64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	seen := map[int64]bool{}
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
			if seq, ns, ok := parseStamp(line); ok && !seen[seq] {
				seen[seq] = true
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

// parseStamp finds "lat:SEQ:NS" in a line.
func parseStamp(line []byte) (seq, ns int64, ok bool) {
	i := bytes.Index(line, []byte(fakeagent.StampPrefix))
	if i < 0 {
		return 0, 0, false
	}
	rest := string(line[i+len(fakeagent.StampPrefix):])
	s, rest, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	seq, err1 := strconv.ParseInt(s, 10, 64)
	ns, err2 := strconv.ParseInt(rest[:end], 10, 64)
	return seq, ns, err1 == nil && err2 == nil
}
