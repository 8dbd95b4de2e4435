package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentharness/harness/config"
)

type configCmd struct {
	Show configShowCmd `cmd:"" default:"1" help:"Print every setting with its value and where it came from."`
	Path configPathCmd `cmd:"" help:"Print the config files harness reads, in order of precedence (lowest first)."`
	Init configInitCmd `cmd:"" help:"Write a documented harness.toml in the current directory."`
}

type configShowCmd struct{}

func (configShowCmd) Run(e *env) error {
	values := func(s *settings) []config.Value { return s.cfg.Values() }
	return printSettingsList(e, false, values, "KEY\tVALUE\tFROM", func(v config.Value) string {
		return v.Key + "\t" + v.Value + "\t" + v.Origin
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
	state := func(p string) string {
		if _, err := os.Stat(p); err != nil {
			return "(not present)"
		}
		return ""
	}
	if project == "" {
		project = filepath.Join(wd, config.ProjectFileName)
	}
	// One write, whose error is the command's: output nobody got (a full
	// disk) is not a success.
	_, err = fmt.Fprintf(e.Stdout, "user     %s %s\nproject  %s %s\n", user, state(user), project, state(project))
	return err
}

type configInitCmd struct {
	Force bool `help:"Overwrite an existing harness.toml."`
}

func (c configInitCmd) Run(e *env) error {
	path := config.ProjectFileName
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if c.Force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return usageErrorf("config init: %s exists (use --force to overwrite)", path)
	}
	if err != nil {
		return usageErrorf("config init: %v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(config.Example()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "wrote %s\n", path)
	return err
}
