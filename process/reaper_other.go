//go:build !linux

package process

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Outside Linux there is no child subreaper: MaybeReap only runs a reaper
// that a Linux harness would have asked for (never), and runs have none.

var reaperExe string

// MaybeReap does nothing outside Linux.
func MaybeReap() {}

type reaperConn struct {
	agentPath, marker string
	tag               uint64
	ctty, pid, killed int
	lost              bool
	proc              *os.Process
	done              chan struct{}
}

func newTag() uint64 { return 0 }

var errNoReaper = errors.New("process: no reaper on this system")

func (r *reaperConn) prepare(*exec.Cmd) ([]*os.File, error) { return nil, errNoReaper }
func (r *reaperConn) agentPID() (int, error)                { return 0, errNoReaper }
func (r *reaperConn) agentExit() (syscall.WaitStatus, bool) { return 0, false }
func (r *reaperConn) wait(*exec.Cmd)                        { close(r.done) }
func (r *reaperConn) close()                                {}
func (r *reaperConn) abandon()                              {}
func (r *reaperConn) cont()                                 {}
func (r *reaperConn) end(func(procStat))                    {}
