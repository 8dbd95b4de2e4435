package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

type checkCmd struct {
	Agent string `arg:"" optional:"" help:"Agent to check."`
	// AgentFlag is the same, named as run and conform take it.
	AgentFlag  string `name:"agent" short:"a" help:"Agent to check (instead of the argument)."`
	binaryFlag `embed:""`
}

// Run is a doctor for one agent: binary, version, credentials, and the
// flags harness relies on. Exit 0 when all is well, 1 on a problem, 127
// when the agent is not installed. The binary and credentials are the
// ones a run would use: --binary, else the configuration's ([agents.NAME]
// binary and env), else the environment and the usual search.
func (c *checkCmd) Run(e *env) error {
	// Every line goes through out, which keeps the first write error: a
	// report nobody got (a full disk) ends the check with that error, as
	// other commands' output does, unless the check was interrupted.
	out := &stickyWriter{w: e.Stdout}
	ce := *e
	ce.Stdout = out
	err := c.check(&ce)
	if out.err != nil && !errors.Is(err, errProbeInterrupted) {
		return out.err
	}
	return err
}

func (c *checkCmd) check(e *env) error {
	name := cmp.Or(c.Agent, c.AgentFlag)
	switch {
	case name == "":
		return usageErrorf("check: which agent? give its name (harness check claude)")
	case c.Agent != "" && c.AgentFlag != "" && c.Agent != c.AgentFlag:
		return usageErrorf("check: one agent at a time: %q and --agent %q", c.Agent, c.AgentFlag)
	}
	a, err := harness.Lookup(name)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	s, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	ok := func(format string, args ...any) { fmt.Fprintf(e.Stdout, "ok    "+format+"\n", args...) }
	bad := func(format string, args ...any) { fmt.Fprintf(e.Stdout, "FAIL  "+format+"\n", args...) }
	ac := s.cfg.Agents[a.Name()]
	binary := c.Binary
	if ac.Protocol == "" || ac.Protocol == harness.ProtocolCLI {
		binary = cmp.Or(binary, ac.Binary) // else the configured binary is of another protocol's command
	}
	cmd, err := findAgent(e, a.Name(), binary)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	if cmd.NotInstalled != nil {
		bad("binary: %v", cmd.NotInstalled)
		return withStatus(exitNotFound, nil)
	}
	path := cmd.Binary
	ok("binary: %s", path)
	if selfContained(a) {
		ok("%s needs nothing else", a.Name())
		return nil
	}
	problems := 0
	v, verr := probeVersion(path)
	switch {
	case errors.Is(verr, errProbeInterrupted):
		return verr
	case errors.Is(verr, errProbeTimeout):
		// Not "printed nothing": a slow machine is told from a broken CLI.
		bad("version: %s --version did not finish within %s", path, probeBound)
		problems++
	case verr != nil:
		// What a CLI that cannot start prints (a missing module, a node
		// too old) is not its version.
		if v != "" {
			v = ": " + cutVersion(v)
		}
		bad("version: %s --version: %v%s", path, verr, v)
		problems++
	case v == "":
		bad("version: %s --version printed nothing", path)
		problems++
	case !looksLikeText(v):
		bad("version: %s --version printed no version (binary output)", path)
		problems++
	case !strings.ContainsAny(v, "0123456789"):
		bad("version: %s --version printed no version: %s", path, cutVersion(v))
		problems++
	default:
		ok("version: %s", cutVersion(v))
		if pin := harness.Pin(a.Info.NPMPackage); pin != "" && !hasVersion(v, pin) {
			// Not a failure: a newer CLI may well still be read exactly.
			// conform plays the binary checked here, not the one it would find.
			conform := "harness conform --agent " + a.Name()
			if binary != "" {
				conform += " --binary " + shellQuote(path)
			}
			fmt.Fprintf(e.Stdout, "warn  version: not the pinned %s (agents.lock): run '%s' to check harness still reads it exactly\n", pin, conform)
		}
	}
	var creds []string
	for _, k := range a.Info.CredentialEnv {
		if e.Getenv(k) != "" || ac.Env[k] != "" {
			creds = append(creds, k) // the name only: a value is a secret
		}
	}
	switch {
	case len(a.Info.CredentialEnv) == 0:
		ok("credentials: none needed")
	case len(creds) > 0:
		ok("credentials: %s set", strings.Join(creds, ", "))
	default:
		// Not a failure: the CLI may have its own login, or run on --mock.
		fmt.Fprintf(e.Stdout, "warn  credentials: none of %s is set (fine if the CLI is logged in, or with --mock)\n", strings.Join(a.Info.CredentialEnv, ", "))
	}
	// A CLI that did not answer --version within the bound hangs: its
	// --help would only cost another bound (or two, with a subcommand).
	var help string
	var herr error
	if !errors.Is(verr, errProbeTimeout) {
		help, herr = helpText(path, a.Info.Flags)
	}
	switch {
	case errors.Is(herr, errProbeInterrupted):
		return herr
	case errors.Is(verr, errProbeTimeout):
		bad("flags: not checked: %s did not answer --version", path)
		problems++
	case errors.Is(herr, errProbeTimeout):
		bad("flags: %s --help did not finish within %s", path, probeBound)
		problems++
	default:
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
			if errors.Is(err, errProbeInterrupted) {
				break
			}
			sub, serr := probe(path, f, "--help")
			b.WriteString(sub)
			if errors.Is(serr, errProbeTimeout) || errors.Is(serr, errProbeInterrupted) {
				err = serr
			}
		}
	}
	if !errors.Is(err, errProbeTimeout) && !errors.Is(err, errProbeInterrupted) {
		err = nil // a CLI may exit non-zero after its help
	}
	return b.String(), err
}

// versionMax is the most of a --version line shown: a CLI's is a few
// words; more is not a version (a binary that printed a file).
const versionMax = 80

// cutVersion is the --version line v cut to versionMax characters, with
// an ellipsis when cut.
func cutVersion(v string) string {
	if utf8.RuneCountInString(v) <= versionMax {
		return v
	}
	return string([]rune(v)[:versionMax-1]) + "…"
}

// looksLikeText reports whether the --version line v is text: bytes that
// are not UTF-8 (ansi.TermSafe made each a U+FFFD) are less than a quarter of
// it. Random bytes make about half of a line so (the rest decodes, by
// chance, as ASCII or other characters); a CLI's version line none.
func looksLikeText(v string) bool {
	return 4*strings.Count(v, string(utf8.RuneError)) < utf8.RuneCountInString(v)
}

// isVersion reports whether the --version line v can be a version: text
// with a digit in it.
func isVersion(v string) bool {
	return looksLikeText(v) && strings.ContainsAny(v, "0123456789")
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

// shellQuote is path as one word of a shell command line.
func shellQuote(path string) string {
	if path != "" && strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-") == "" {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}

// stickyWriter passes writes to w until one fails, then keeps that error
// (err) and fails every later write with it.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}
