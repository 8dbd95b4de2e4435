package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"

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
