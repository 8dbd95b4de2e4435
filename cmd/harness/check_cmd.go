package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
)

type checkCmd struct {
	Agent      string `arg:"" help:"Agent to check."`
	binaryFlag `embed:""`
}

// Run is a doctor for one agent: binary, version, credentials, and the
// flags harness relies on. Exit 0 when all is well, 1 on a problem, 127
// when the agent is not installed.
func (c *checkCmd) Run(e *env) error {
	a, err := harness.Lookup(c.Agent)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	ok := func(format string, args ...any) { fmt.Fprintf(e.Stdout, "ok    "+format+"\n", args...) }
	bad := func(format string, args ...any) { fmt.Fprintf(e.Stdout, "FAIL  "+format+"\n", args...) }
	cmd, err := findAgent(e, a.Name(), c.Binary)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	if cmd.NotInstalled != nil {
		bad("binary: %v", cmd.NotInstalled)
		return withStatus(exitNotFound, nil)
	}
	path := cmd.Binary
	ok("binary: %s", path)
	problems := 0
	v, verr := probeVersion(path)
	if errors.Is(verr, errProbeTimeout) {
		// Not "printed nothing": a slow machine is told from a broken CLI.
		bad("version: %s --version did not finish within %s", path, probeBound)
		problems++
	} else if v != "" {
		ok("version: %s", v)
		if pin := harness.Pin(a.Info.NPMPackage); pin != "" && !hasVersion(v, pin) {
			// Not a failure: a newer CLI may well still be read exactly.
			fmt.Fprintf(e.Stdout, "warn  version: not the pinned %s (agents.lock): run 'harness conform --agent %s' to check harness still reads it exactly\n", pin, a.Name())
		}
	} else {
		bad("version: %s --version printed nothing", path)
		problems++
	}
	var creds []string
	for _, k := range a.Info.CredentialEnv {
		if e.Getenv(k) != "" {
			creds = append(creds, k)
		}
	}
	if len(creds) > 0 {
		ok("credentials: %s set", strings.Join(creds, ", "))
	} else {
		// Not a failure: the CLI may have its own login, or run on --mock.
		fmt.Fprintf(e.Stdout, "warn  credentials: none of %s is set (fine if the CLI is logged in, or with --mock)\n", strings.Join(a.Info.CredentialEnv, ", "))
	}
	if help, err := helpText(path, a.Info.Flags); errors.Is(err, errProbeTimeout) {
		bad("flags: %s --help did not finish within %s", path, probeBound)
		problems++
	} else {
		for _, f := range a.Info.Flags {
			if strings.Contains(help, f) {
				ok("flag %s", f)
			} else {
				bad("flag %s: not in %s's --help", f, a.Name())
				problems++
			}
		}
	}
	if problems > 0 {
		return withStatus(exitAgentFailed, errors.New(fmt.Sprintf("check %s: %d problem(s)", a.Name(), problems)))
	}
	return nil
}

// helpText is the agent's --help, plus the --help of each subcommand
// harness uses (a flag without a dash, like codex's exec).
// Its error is errProbeTimeout when one of them did not finish.
func helpText(path string, flags []string) (string, error) {
	var b strings.Builder
	out, err := probe(path, "--help")
	b.WriteString(out)
	for _, f := range flags {
		if !strings.HasPrefix(f, "-") {
			sub, serr := probe(path, f, "--help")
			b.WriteString(sub)
			if errors.Is(serr, errProbeTimeout) {
				err = serr
			}
		}
	}
	if !errors.Is(err, errProbeTimeout) {
		err = nil // a CLI may exit non-zero after its help
	}
	return b.String(), err
}

// hasVersion reports whether the --version line v names version: as a
// word of its own ("2.1.329 (Claude Code)", "codex-cli 0.169.0"), with or
// without a leading v.
func hasVersion(v, version string) bool {
	for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == ',' }) {
		if strings.TrimPrefix(w, "v") == version {
			return true
		}
	}
	return false
}
