//go:build !linux

package procstat

import "os"

// ReadFile reads a small kernel file; there is no /proc here.
func ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }
