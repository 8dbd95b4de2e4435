//go:build !linux

package process

import "syscall"

// Outside Linux there are no cgroups: runs never have one.
type runCgroup struct{}

func newRunCgroup(string) *runCgroup           { return nil }
func disableCgroups()                          {}
func (c *runCgroup) attr(*syscall.SysProcAttr) {}
func (c *runCgroup) procs() []int              { return nil }
func (c *runCgroup) remove()                   {}
func cgroupRefused(error, *runCgroup) bool     { return false }
