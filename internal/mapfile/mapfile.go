// Package mapfile maps a regular file into memory, read-only, for a
// reader that goes through it once from the front (harness parse), and
// gives the pages behind that reader back as it goes. Reading a mapped
// file skips the kernel's copy of every byte into a buffer, and lets a
// parser keep pieces of its lines without copying them.
//
// The mapping is never unmapped: what was parsed from it (events, a
// result) may hold pieces of it to the end of the process. A file
// shortened while it is mapped makes a read of the lost part fault
// (SIGBUS); a goroutine Catching such faults gets that as a panic it
// recovers, where it would have ended the program.
package mapfile

import (
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Map maps the whole of f, a regular file, as it is now. It returns nil
// when f is not to be mapped (empty, not regular, larger than the address
// space, or the mapping refused): f is then read as usual.
func Map(f *os.File) []byte { return MapFrom(f, 0) }

// MapFrom maps f from byte off to its end, as it is now: what a read of f
// at offset off would read (stdin redirected from a file starts at the
// shell's offset). It returns nil as Map does, and when nothing is left
// from off.
func MapFrom(f *os.File, off int64) []byte {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || off < 0 || st.Size() <= off || st.Size() != int64(int(st.Size())) {
		return nil
	}
	// A mapping starts on a page: the bytes before off in its first page
	// are mapped, and not handed out.
	skew := int(off & int64(os.Getpagesize()-1))
	data, err := unix.Mmap(int(f.Fd()), off-int64(skew), int(st.Size()-off)+skew, unix.PROT_READ, unix.MAP_SHARED)
	runtime.KeepAlive(f)
	if err != nil {
		return nil
	}
	// Read ahead of the reader, and early.
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return data[skew:]
}

// Release gives the pages of data[from:to] back: they no longer count in
// the process's resident memory, and a later read of them (a piece kept
// of an early line) reads them again from the page cache, unchanged.
// The pages released run from the one holding data[from] to the one
// holding data[to], which is kept: calls for consecutive spans release
// every page once. (A page that starts before data, its first when data
// does not start on a page, is kept too.)
func Release(data []byte, from, to int) {
	from, to = pageStart(data, from), pageStart(data, min(to, len(data)))
	if from < to {
		_ = unix.Madvise(data[from:to], unix.MADV_DONTNEED)
	}
}

// Prefault maps the pages of data[from:to] in one call, where the
// reader's first touch of each would fault (a fault maps 16 pages): the
// reader then finds them mapped. A kernel older than 5.14, or another
// system than Linux, maps nothing here, and the reader's faults map them
// as before.
func Prefault(data []byte, from, to int) {
	from, to = pageStart(data, from), min(to, len(data))
	if from < to {
		populate(data[from:to])
	}
}

// pageStart is the offset in data where the page holding data[i] starts
// (madvise takes whole pages), or where the next one starts when that
// one starts before data.
func pageStart(data []byte, i int) int {
	page := os.Getpagesize()
	skew := int(uintptr(unsafe.Pointer(unsafe.SliceData(data))) & uintptr(page-1))
	start := (max(i, 0)+skew)&^(page-1) - skew
	if start < 0 {
		start += page
	}
	return start
}

// IsFault reports whether v, what a goroutine with debug.SetPanicOnFault
// set panicked with, is a fault reading data: the file was shortened
// after it was mapped.
func IsFault(v any, data []byte) bool {
	fault, ok := v.(interface{ Addr() uintptr })
	if !ok || len(data) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	addr := fault.Addr()
	return addr >= start && addr-start < uintptr(len(data))
}

// Catching makes a fault on this goroutine a panic (debug.SetPanicOnFault)
// until the function it returns, deferred, sets it back and recovers a
// fault reading data, which it hands to onFault; any other panic goes on:
//
//	defer mapfile.Catching(data, func() { err = errShortened })()
func Catching(data []byte, onFault func()) func() {
	was := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(was)
		if v := recover(); v != nil {
			if !IsFault(v, data) {
				panic(v)
			}
			onFault()
		}
	}
}
