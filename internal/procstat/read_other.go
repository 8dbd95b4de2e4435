//go:build !linux

package procstat

import "os"

// ReadFile reads a small kernel file; there is no /proc here.
func ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// OtherThread returns 0: there are no threads to list here.
func OtherThread(int) int { return 0 }
