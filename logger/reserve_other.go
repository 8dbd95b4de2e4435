//go:build !linux

package logger

import (
	"errors"
	"os"
)

// reserve: no allocation ahead of the writes on this platform.
func reserve(*os.File, int64, int64) error { return errors.ErrUnsupported }

// writeBehind: the page cache is the kernel's alone on this platform.
func writeBehind(*os.File, int64, int64, int64) error { return errors.ErrUnsupported }
