package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// machine measures what this machine charges any process for memory it
// has not used lately, which the rows that need fresh pages pay on top of
// harness's own work: the session log's flood (its files' page cache) and
// the end of an idle run. On a VM whose balloon reports free pages to the
// host, a page the guest freed seconds ago is gone from the host, and
// the guest's next use of it faults in the host as well: work the guest
// sees as its own CPU. The two rows give the same work done right after
// memory was freed and after Rest of rest, Rounds times each (medians).
func (b *bench) machine() []row {
	size, rest, rounds := b.sz.MachineWrite, b.sz.MachineRest, b.sz.MachineRounds
	b.log("machine: %s written, %d MiB touched, %d rounds, %s of rest", human(size), touchBytes>>20, rounds, rest)
	file := filepath.Join(b.tmp, "machine-write")
	defer os.Remove(file)
	write := func() (float64, error) {
		u, err := b.usageOf([]string{"dd", "if=/dev/zero", "of=" + file, "bs=2M", fmt.Sprintf("count=%d", size>>21), "status=none"}, os.Environ())
		syscall.Sync()
		os.Remove(file) // its pages, clean, are free again
		return u.CPU, err
	}
	var hotW, coldW, hotT, coldT []float64
	if _, err := write(); err != nil { // the file system's own first use
		return []row{failedRow("machine: a new file written", "—", err)}
	}
	for range rounds {
		h, err := write()
		if err != nil {
			return []row{failedRow("machine: a new file written", "—", err)}
		}
		hotT = append(hotT, touchFresh())
		time.Sleep(rest)
		c, err := write()
		if err != nil {
			return []row{failedRow("machine: a new file written", "—", err)}
		}
		hotW, coldW = append(hotW, h), append(coldW, c)
		time.Sleep(rest)
		coldT = append(coldT, touchFresh())
	}
	reporting := freePageReporting()
	return []row{
		{Figure: fmt.Sprintf("machine: %s written to a new file (dd, 2 MiB writes), its CPU", human(size)),
			Value:     fmt.Sprintf("%.3f s after %s of rest", median(coldW), rest),
			Reference: fmt.Sprintf("%.3f s right after %s was freed; balloon free page reporting: %s", median(hotW), human(size), reporting),
			Ratio:     fmt.Sprintf("%.2f× (medians of %d)", median(coldW)/median(hotW), rounds),
			Target:    "— (the machine's, not harness's)", Met: "—"},
		{Figure: fmt.Sprintf("machine: first touch of %d MiB of fresh memory, per page", touchBytes>>20),
			Value:     fmt.Sprintf("%.2f µs after %s of rest", median(coldT), rest),
			Reference: fmt.Sprintf("%.2f µs right after the file's %s was freed", median(hotT), human(size)),
			Ratio:     fmt.Sprintf("%.2f× (medians of %d)", median(coldT)/median(hotT), rounds),
			Target:    "— (the machine's, not harness's)", Met: "—"},
	}
}

// touchBytes is how much fresh memory touchFresh touches.
const touchBytes = 64 << 20

// touchFresh maps touchBytes of fresh memory, writes a byte of each page
// and unmaps it, and returns the wall time a page took, in µs (the
// process does nothing else meanwhile: its wall time is the fault's
// cost, host's included).
func touchFresh() float64 {
	m, err := syscall.Mmap(-1, 0, touchBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0
	}
	defer syscall.Munmap(m)
	page := os.Getpagesize()
	start := time.Now()
	for i := 0; i < len(m); i += page {
		m[i] = 1
	}
	return float64(time.Since(start).Microseconds()) / float64(len(m)/page)
}

// freePageReporting says whether a virtio balloon reports the guest's
// free pages to the host (VIRTIO_BALLOON_F_REPORTING, feature bit 5).
func freePageReporting() string {
	devs, _ := filepath.Glob("/sys/bus/virtio/devices/*")
	for _, d := range devs {
		id, _ := os.ReadFile(filepath.Join(d, "device"))
		if strings.TrimSpace(string(id)) != "0x0005" {
			continue
		}
		features, _ := os.ReadFile(filepath.Join(d, "features"))
		if len(features) > 5 && features[5] == '1' {
			return "on"
		}
		return "off"
	}
	return "no balloon"
}
