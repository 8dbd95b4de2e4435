package conform

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// file is what a directory holds at one path, to compare what a run
// left with what it should have: a regular file's content, or anything
// else (a symlink and its target, a named pipe) by its type.
type file struct {
	typ  fs.FileMode // the type bits: 0 for a regular file
	data string      // a regular file's content, a symlink's target
}

// shown is how much of a file's content a check's detail quotes.
const shown = 200

// String is the file for a check's detail: its content quoted (the first
// shown bytes of a longer one), or its type.
func (f file) String() string {
	switch {
	case f.typ == 0 && len(f.data) > shown:
		return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(f.data[:shown]), len(f.data))
	case f.typ == 0:
		return strconv.Quote(f.data)
	case f.typ&fs.ModeSymlink != 0:
		return "a symlink to " + strconv.Quote(f.data)
	}
	return "a file of type " + f.typ.String()
}

// readFiles is every file under dir but directories, by its path
// relative to dir (slash-separated). A directory holds only what is in
// it: an empty one is nothing.
func readFiles(dir string) (map[string]file, error) {
	files := map[string]file{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		f := file{typ: d.Type().Type()}
		switch {
		case f.typ == 0:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			f.data = string(b)
		case f.typ&fs.ModeSymlink != 0:
			if f.data, err = os.Readlink(path); err != nil {
				return err
			}
		}
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the files: %w", err)
	}
	return files, nil
}

// leftFiles are the files the run left in its working directory, all of
// them: no CLI conform drives leaves a file of its own there (Claude
// Code, Codex, Gemini CLI and OpenCode over the CLI and ACP, on their
// pinned versions), so none is set aside. One that does must be named
// here, with which CLI and why.
func (r *Run) leftFiles() (map[string]file, error) {
	return readFiles(r.Workdir)
}

// How the files a run left differ from those it should have.
type change int

const (
	same    change = iota
	added          // the run left a file it should not have
	removed        // the run did not leave a file it should have
	changed        // the file the run left is not the one it should be
)

// difference is the first path, in order, where the files left and want
// differ, and how; same when they do not.
func difference(left, want map[string]file) (string, change) {
	paths := sortedKeys(left)
	for p := range want {
		if _, ok := left[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		l, inLeft := left[p]
		w, inWant := want[p]
		switch {
		case !inWant:
			return p, added
		case !inLeft:
			return p, removed
		case l != w:
			return p, changed
		}
	}
	return "", same
}
