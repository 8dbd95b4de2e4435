// Package procstat reads /proc/PID/stat: a process's state, parent,
// group, session and start time. It is the one reader of that file for
// the supervisor (process), the session log (logger) and the benchmarks;
// where there is no /proc every read fails (ok is false).
package procstat

import (
	"bytes"
	"strconv"
)

// Stat is what the harness uses of /proc/PID/stat.
type Stat struct {
	PID, PPID, Pgrp, SID int
	// State is the one-letter state (R, S, D, Z, X, …).
	State byte
	// Start is the start time in clock ticks after boot (field 22): a
	// reused pid has another start.
	Start uint64
}

// Live reports whether the process has not ended: it is neither dead nor
// a zombie (dead, not yet reaped) whose every thread has exited. A
// process whose main thread exited while others run on (pthread_exit in
// main) reads 'Z' too, with its environment unreadable, yet runs.
func (s Stat) Live() bool {
	return s.State != 'X' && (s.State != 'Z' || OtherThread(s.PID) != 0)
}

// Read reads pid's stat; ok is false when there is no such process (or
// no /proc).
func Read(pid int) (Stat, bool) {
	b, err := ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	return Parse(pid, b)
}

// Parse parses the contents of /proc/PID/stat; the command name (field 2)
// may contain spaces and parentheses, so fields are counted after the
// last ')'.
func Parse(pid int, b []byte) (Stat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, false
	}
	num := func(k int) int { n, _ := strconv.Atoi(string(f[k])); return n }
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return Stat{}, false
	}
	return Stat{PID: pid, State: f[0][0], PPID: num(1), Pgrp: num(2), SID: num(3), Start: start}, true
}
