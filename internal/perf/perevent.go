package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"syscall"
)

// perEventRuns is how many times each agent's stream is parsed for its
// CPU per event; the median is taken.
const perEventRuns = 7

// cpuPerEvent is the agent-independent yardstick of parsing: the CPU
// (user+sys) of `harness parse --agent agent file`, output counted and
// dropped, over the number of events it emitted. Median of perEventRuns.
// The reference says how many native lines and bytes the agent spent on
// an event: a line that emits nothing (Claude's repeated system init and
// result lines, its stream_event frames) is read all the same, so the
// figure of a verbose stream is bound by its bytes, not its events.
func (b *bench) cpuPerEvent(agent, file string) row {
	figure, target := "parse CPU per emitted event: "+agent, "≤ 0.8 µs"
	var per []float64
	var events int64
	var cpu float64
	for range perEventRuns {
		c, n, err := b.parseCPU(agent, file)
		if err != nil {
			return failedRow(figure, target, err)
		}
		per, events, cpu = append(per, c/float64(n)*1e6), n, c
	}
	m := median(per)
	size, lines, err := countLines(file)
	if err != nil {
		return failedRow(figure, target, err)
	}
	return row{Figure: figure, Value: fmt.Sprintf("%.3f µs", m),
		Reference: fmt.Sprintf("%d events of %d native lines (%.1f a event, %.0f B), %.2f s CPU (last run)",
			events, lines, float64(lines)/float64(events), float64(size)/float64(events), cpu),
		Ratio: "—", Target: target, Met: metStr(m <= 0.8)}
}

// parseCPU runs harness parse once and returns its CPU in seconds and the
// number of events (lines) it wrote.
func (b *bench) parseCPU(agent, file string) (float64, int64, error) {
	cmd := exec.Command(b.harness, "parse", "--agent", agent, file)
	cmd.Env = b.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	var n int64
	buf := make([]byte, 1<<20)
	for {
		k, rerr := out.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return 0, 0, rerr
		}
	}
	if err := cmd.Wait(); err != nil {
		return 0, 0, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok || n == 0 {
		return 0, 0, fmt.Errorf("no rusage or no events")
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime), n, nil
}
