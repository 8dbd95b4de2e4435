package process

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Sentinel errors. Outcome.Reason is one of the first four (or nil); Start
// returns the last two (wrapped) or a *NotFoundError.
var (
	// ErrIdleTimeout: no output and no tool call in flight for Options.Idle.
	ErrIdleTimeout = errors.New("process: idle timeout")
	// ErrHardTimeout: Options.Hard passed since spawn.
	ErrHardTimeout = errors.New("process: hard timeout")
	// ErrInterrupted: Proc.Interrupt was called or the context was
	// cancelled; in the latter case the reason also wraps the context's
	// cause (context.Canceled, context.DeadlineExceeded, …).
	ErrInterrupted = errors.New("process: interrupted")
	// ErrLingered: the agent printed its terminal event (Proc.AgentDone) and
	// had not exited Options.Linger later.
	ErrLingered = errors.New("process: lingered after result")

	// ErrBadDir: Options.Dir does not exist or is not a directory.
	ErrBadDir = errors.New("process: bad working directory")
	// ErrSpawn: the process could not be started; it wraps the cause.
	ErrSpawn = errors.New("process: spawn failed")
)

// NotFoundError reports an agent binary that is not installed: Name is
// the (first) name looked for, Tried every path that was looked at, in
// order. Unusable, when set, says why the last path tried, given as a
// path, exists but cannot run ("is a directory, not an executable"): a
// --binary that is there is not "not installed". It is
// harness.NotInstalledError.
type NotFoundError struct {
	Name     string
	Tried    []string
	Unusable string
}

func (e *NotFoundError) Error() string {
	if e.Unusable != "" && len(e.Tried) > 0 {
		return fmt.Sprintf("%s: %s %s", e.Name, e.Tried[len(e.Tried)-1], e.Unusable)
	}
	if len(e.Tried) == 0 {
		return fmt.Sprintf("%s is not installed: no directory to look in (PATH is empty)", e.Name)
	}
	return fmt.Sprintf("%s is not installed: tried %s", e.Name, strings.Join(e.Tried, ", "))
}

// interruptError is Outcome.Reason for an interrupt that came from the
// context: errors.Is matches both ErrInterrupted and the context's cause.
type interruptError struct{ cause error }

func (e *interruptError) Error() string { return ErrInterrupted.Error() + ": " + e.cause.Error() }

func (e *interruptError) Unwrap() []error { return []error{ErrInterrupted, e.cause} }

// execError is the failure to start the agent's executable path (err),
// naming it: the cause alone ("no such file or directory") named neither
// the agent nor what is missing, and through a run's reaper exec's own
// "fork/exec PATH" named the harness's binary. An executable that exists
// but "does not" is a script whose #! interpreter does not, or an ELF
// binary whose dynamic loader (PT_INTERP) does not (relative to dir when
// relative, as the kernel takes them): the message names it.
// The cause stays wrapped (errors.Is(err, syscall.ENOENT)).
func execError(dir, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "fork/exec" {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		if interp := interpreter(path); interp != "" && missing(dir, interp) {
			return fmt.Errorf("%s: its #! interpreter %s does not exist: %w", path, interp, err)
		}
		if loader := elfInterpreter(path); loader != "" && missing(dir, loader) {
			return fmt.Errorf("%s: its dynamic loader (ELF interpreter) %s does not exist: %w", path, loader, err)
		}
	}
	return fmt.Errorf("%s: %w", path, err)
}

// missing reports whether the file name, relative to dir when relative,
// does not exist.
func missing(dir, name string) bool {
	if !filepath.IsAbs(name) && dir != "" {
		name = filepath.Join(dir, name)
	}
	_, err := os.Stat(name)
	return errors.Is(err, fs.ErrNotExist)
}

// elfInterpreter is the program interpreter (PT_INTERP) of the ELF file
// path, "" when it has none or cannot be read. Only its headers (and
// section names) are read.
func elfInterpreter(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		if prog.Filesz < 2 || prog.Filesz > 4096 { // the kernel's bounds (PATH_MAX)
			return ""
		}
		b := make([]byte, prog.Filesz)
		if _, err := prog.ReadAt(b, 0); err != nil {
			return ""
		}
		name, _, _ := bytes.Cut(b, []byte{0})
		return string(name)
	}
	return ""
}

// interpreter is the interpreter a #! line at the start of the file path
// names, "" when there is none (as the kernel reads it: its first 256
// bytes, the first word after "#!").
func interpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head) // a shorter file is read whole
	line, ok := bytes.CutPrefix(head[:n], []byte("#!"))
	if !ok {
		return ""
	}
	line, _, _ = bytes.Cut(line, []byte("\n"))
	if fields := strings.Fields(string(line)); len(fields) > 0 {
		return fields[0]
	}
	return ""
}
