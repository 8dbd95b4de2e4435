package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/internal/urlmask"
)

type configCmd struct {
	Show configShowCmd `cmd:"" default:"1" help:"Print every setting with its value and where it came from."`
	Path configPathCmd `cmd:"" help:"Print the config files harness reads, in order of precedence (lowest first)."`
	Init configInitCmd `cmd:"" help:"Write a documented harness.toml in the current directory."`
}

type configShowCmd struct{}

func (configShowCmd) Run(e *env) error {
	values := func(s *settings) []config.Value {
		vs := s.cfg.Values()
		for i := range vs {
			if vs[i].Key == "otlp" {
				vs[i].Value = urlmask.Mask(vs[i].Value)
			}
		}
		return vs
	}
	return printSettingsList(e, false, values, "KEY\tVALUE\tFROM", func(v config.Value) string {
		return v.Key + "\t" + cell(v.Value) + "\t" + cell(v.Origin)
	})
}

type configPathCmd struct{}

func (configPathCmd) Run(e *env) error {
	wd, _ := os.Getwd()
	project, err := config.FindProject(wd)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	user := config.DefaultUserFile(e.Getenv)
	if project == "" {
		project = filepath.Join(wd, config.ProjectFileName)
	}
	// "(not present)" only for a file that is not there: one that cannot
	// be looked at (a link loop) is the error every other command stops on.
	states := make([]string, 2)
	for i, p := range []string{user, project} {
		present, err := config.Present(p)
		if err != nil {
			return withStatus(exitUsage, err)
		}
		if !present {
			states[i] = "(not present)"
		}
	}
	// One write, whose error is the command's: output nobody got (a full
	// disk) is not a success.
	_, err = fmt.Fprintf(e.Stdout, "user     %s %s\nproject  %s %s\n", user, states[0], project, states[1])
	return err
}

type configInitCmd struct {
	Force bool `help:"Overwrite an existing harness.toml."`
}

func (c configInitCmd) Run(e *env) error {
	path := config.ProjectFileName
	// O_NONBLOCK: opening a FIFO to write waits for a reader; without one
	// it fails at once instead (ENXIO), and one with a reader is refused
	// below. It changes nothing of writing a regular file.
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL | syscall.O_NONBLOCK
	if c.Force {
		// Only a regular file is overwritten: a FIFO, a device or a
		// directory at the name is not a harness.toml to replace.
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			return usageErrorf("config init: %s is not a regular file (%s)", path, regfile.Kind(fi.Mode()))
		}
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC | syscall.O_NONBLOCK
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return usageErrorf("config init: %s exists (use --force to overwrite)", path)
	}
	if errors.Is(err, syscall.ENXIO) { // a FIFO put there since the look above
		return usageErrorf("config init: %s is not a regular file (a FIFO)", path)
	}
	if err != nil {
		return usageErrorf("config init: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return usageErrorf("config init: %s is not a regular file (%s)", path, regfile.Kind(fi.Mode()))
	}
	if _, err := f.WriteString(config.Example()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "wrote %s\n", path)
	return err
}
