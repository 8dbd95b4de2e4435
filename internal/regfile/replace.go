package regfile

import (
	"os"
	"path/filepath"
)

// A ReplaceOption changes how Replace writes.
type ReplaceOption func(*replaceOptions)

type replaceOptions struct {
	sync    bool
	pattern string
}

// Synced makes Replace flush the new file to disk before renaming it, so
// that a crash soon after cannot leave path empty or short. The flush is
// slow on a busy disk: take it for what must survive a crash, not for
// what every run writes.
func Synced() ReplaceOption { return func(o *replaceOptions) { o.sync = true } }

// TempPattern names the temporary file by pattern, as os.CreateTemp
// does, in place of "."+base+".*.tmp": for a directory whose owner
// sweeps leftovers by its own names (git's "tmp_obj_").
func TempPattern(pattern string) ReplaceOption {
	return func(o *replaceOptions) { o.pattern = pattern }
}

// Replace writes path whole or not at all: write fills a new temporary
// file in path's directory (by default ".<base>.<random>.tmp", so that a
// crash leaves a hidden, plainly temporary file), which gets mode perm
// and is renamed over path; a reader sees the old file or the new one,
// never a part. On any error, write's included, the temporary file is
// removed and path is as it was. write must not close f. The error is
// the failing step's own, unwrapped; an error before write is called
// (creating the temporary file) is os.CreateTemp's.
//
// A symbolic link at path is replaced, not followed, and so is a FIFO or
// a device: a caller that must not replace one checks first.
func Replace(path string, perm os.FileMode, write func(f *os.File) error, opts ...ReplaceOption) error {
	o := replaceOptions{pattern: "." + filepath.Base(path) + ".*.tmp"}
	for _, opt := range opts {
		opt(&o)
	}
	f, err := os.CreateTemp(filepath.Dir(path), o.pattern)
	if err != nil {
		return err
	}
	replaced := false
	defer func() { // also when write panics
		if !replaced {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil { // an explicit mode, not one cut by the umask
		return err
	}
	if o.sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	replaced = true
	return nil
}

// WriteFile is Replace writing data: os.WriteFile, but atomic, and perm
// is the mode of the file whether it is new or replaced.
func WriteFile(path string, data []byte, perm os.FileMode, opts ...ReplaceOption) error {
	return Replace(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	}, opts...)
}
