package bench

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/agentharness/harness/internal/regfile"
)

// What an agent or a verifier wrote (its /logs, its workspace) is read
// and written on the host through an os.Root of the directory that
// showed it: a symbolic link left there is followed only while it stays
// inside. Followed on the host, one made in a sandbox would name the
// host's files that the sandbox hides: a verifier's reward.txt linked to
// a host file put that file in the report, and a link in
// /logs/artifacts had the artifacts copied into a host directory.

// errOutside is what an os.Root's refusal is reported as.
var errOutside = errors.New("a symbolic link out of the environment: not followed")

// confinedErr names an os.Root's refusal of a path that leaves it (its
// own error is "path escapes from parent").
func confinedErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("%s: %w", pe.Path, errOutside)
	}
	return err
}

var errArtifactsTooBig = fmt.Errorf("more than %d GiB or %d files", maxCopyBytes>>30, maxCopyFiles)

// readCappedIn is readCapped of name under root.
func readCappedIn(root *os.Root, name string, max int64) ([]byte, error) {
	b, err := regfile.ReadFileIn(root, name, max)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", confinedErr(err))
	}
	return b, nil
}

// copyConfined copies name of src (a file, or a directory and what is
// under it) to dstName in dst, leaving out what has a base name matching
// one of exclude. Directories, regular files and symbolic links are
// copied, links as links (never followed); anything else (a FIFO, a
// device) is not. It copies at most maxCopyBytes in maxCopyFiles files.
func copyConfined(dst *os.Root, dstName string, src *os.Root, name string, exclude []string) error {
	st, err := src.Stat(name)
	if err != nil {
		return confinedErr(err)
	}
	if !st.IsDir() {
		if err := dst.MkdirAll(path.Dir(dstName), 0o755); err != nil {
			return confinedErr(err)
		}
		return copyFileConfined(dst, dstName, src, name, st.Mode().Perm())
	}
	if err := dst.MkdirAll(dstName, 0o755); err != nil {
		return confinedErr(err)
	}
	var size int64
	files := 0
	return fs.WalkDir(src.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == name {
			return confinedErr(err)
		}
		if excluded(d.Name(), exclude) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := path.Join(dstName, strings.TrimPrefix(p, name+"/"))
		if name == "." {
			target = path.Join(dstName, p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return confinedErr(dst.Mkdir(target, info.Mode().Perm()|0o700))
		case d.Type()&fs.ModeSymlink != 0:
			link, err := src.Readlink(p)
			if err != nil {
				return err
			}
			return confinedErr(dst.Symlink(link, target))
		case d.Type().IsRegular():
			size, files = size+info.Size(), files+1
			if size > maxCopyBytes || files > maxCopyFiles {
				return errArtifactsTooBig
			}
			return copyFileConfined(dst, target, src, p, info.Mode().Perm())
		}
		return nil
	})
}

// excluded reports whether base matches one of patterns.
func excluded(base string, patterns []string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, base); ok {
			return true
		}
	}
	return false
}

// copyFileConfined copies the regular file name of src to a new file
// dstName of dst.
func copyFileConfined(dst *os.Root, dstName string, src *os.Root, name string, perm fs.FileMode) error {
	in, err := regfile.OpenIn(src, name)
	if err != nil {
		return confinedErr(err)
	}
	defer in.Close()
	out, err := dst.OpenFile(dstName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return confinedErr(err)
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
