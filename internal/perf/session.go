package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/agentharness/harness/internal/fakeagent"
)

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

// rssMB is the resident set of process pid now, in MB (10^6 bytes).
func rssMB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return float64(kb) * 1024 / 1e6, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
