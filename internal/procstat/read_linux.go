package procstat

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ReadFile reads a small kernel file (/proc, cgroupfs) with plain system
// calls: os.ReadFile first offers the descriptor to Go's poller (and
// takes it back when the file cannot be polled), three times the calls of
// open, read and close, on paths the supervisor reads at every walk of a
// run's processes and at its end.
func ReadFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// OtherThread returns a thread of pid besides its main thread, 0 when
// there is none.
func OtherThread(pid int) int {
	d, err := os.Open("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if tid, err := strconv.Atoi(n); err == nil && tid != pid {
			return tid
		}
	}
	return 0
}
