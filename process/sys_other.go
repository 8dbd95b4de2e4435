//go:build !linux

package process

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Outside Linux there is no /proc, no Pdeathsig and no subreaper: the
// child's group is signalled, and processes that left it are not found.

func sysAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func sysAttrPTY(ctty int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: ctty}
}

func becomeSubreaper() {}

// WidenPipe: pipes keep their size here.
func WidenPipe(*os.File) {}

func openPTY() (master, tty *os.File, err error) {
	return nil, nil, errors.New("pty: not supported on this system")
}

func signalName(s syscall.Signal) string { return "signal " + strconv.Itoa(int(s)) }

type procStat struct {
	pid, ppid, pgrp, sid int
	state                byte
	start                uint64
}

func readStat(int) (procStat, bool) { return procStat{}, false }

func (st procStat) dead() bool { return st.state == 'Z' }

func descendants(int) []procStat { return nil }

// EnvironHas reports false: there is no /proc to read an environment from.
func EnvironHas(int, string) bool { return false }

func orphansOf([]byte, map[int]uint64) (ours, others []procStat, unread bool) { return nil, nil, false }

func (p *Proc) killRun(bool) { p.signalGroup(syscall.SIGKILL) }

// pendingBytes is 0 outside Linux: drain keeps its plain bound there.
func pendingBytes(*os.File) int { return 0 }

func (p *Proc) killAtOnce() { p.killRun(false) }
