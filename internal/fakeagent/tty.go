//go:build unix

package fakeagent

import "golang.org/x/sys/unix"

// unixIoctlWinsize fails unless fd is a terminal.
func unixIoctlWinsize(fd int) (*unix.Winsize, error) {
	return unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
}
