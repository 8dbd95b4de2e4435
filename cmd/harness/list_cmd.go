package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/adapters/oracle"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/internal/ansi"
	"github.com/agentharness/harness/mockmodel"
	"github.com/agentharness/harness/process"
)

type listCmd struct {
	jsonFlag `embed:""`
}

type agentStatus struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Installed bool   `json:"installed"`
	Path      string `json:"path,omitempty"`
	Version   string `json:"version,omitempty"`
}

// Run lists every supported agent, installed or not: installed is where a
// run would find it, the configuration's binary first (as check's).
func (c *listCmd) Run(e *env) error {
	s, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	var rows []agentStatus
	for _, a := range harness.Agents() {
		st := agentStatus{ID: a.Info.ID, Name: a.Info.Display}
		if c, err := findAgent(e, a.Info.ID, configuredBinary(s, a.Info.ID)); err == nil && c.NotInstalled == nil {
			st.Installed, st.Path = true, c.Binary
			if !selfContained(a) { // sh --version is no version, but "Illegal option"
				v, err := probeVersion(c.Binary)
				if errors.Is(err, errProbeInterrupted) {
					return err
				}
				// As check and conform show it: what a CLI that failed,
				// or printed no version (a file, a usage text), said is
				// not its version.
				if err == nil && isVersion(v) {
					st.Version = cutVersion(v)
				}
			}
		}
		rows = append(rows, st)
	}
	if c.JSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tNAME\tINSTALLED\tVERSION\tPATH")
	for _, r := range rows {
		inst := "no"
		if r.Installed {
			inst = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, inst, r.Version, r.Path)
	}
	return tw.Flush()
}

// probeVersion runs "path --version", bounded (probeBound), and returns
// its first line, fit for a terminal, with the probe's error
// (errProbeTimeout when the CLI did not answer in time). The version is what the
// CLI prints on stdout: its warnings go to stderr (codex with its home
// under /tmp: "WARNING: proceeding, …"), read only when stdout is empty.
func probeVersion(path string) (string, error) {
	out, errOut, err := probeStreams(path, "--version")
	if strings.TrimSpace(out) == "" {
		out = errOut
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(ansi.TermSafe(line)), err
}

// probeBound bounds each probe of an agent binary: a bound for a CLI that
// hangs, not a speed test. On a loaded machine gemini's and opencode's
// --version take 20 s (seen, in the bench image).
var probeBound = time.Minute

// errProbeTimeout: the probed CLI was still running at probeBound.
var errProbeTimeout = errors.New("no answer")

// errProbeInterrupted: harness got SIGINT, SIGTERM or SIGHUP during the
// probe, which ended the CLI.
var errProbeInterrupted = withStatus(exitInterrupted, errors.New("interrupted"))

// probe runs the agent binary with args, stdin /dev/null, bounded in time
// and output, and returns what it printed on stdout, then on stderr.
func probe(path string, args ...string) (string, error) {
	out, errOut, err := probeStreams(path, args...)
	return out + errOut, err
}

// probeStreams is probe with stdout and stderr apart. The CLI runs
// supervised as a run's agent is (process.Start: a process group of its
// own, and the run's cgroup or reaper), so everything it started is gone
// once it exited or was ended, also what left its group and session (a
// double fork with setsid): a script that starts the real CLI without
// exec, or a CLI that daemonizes, would leave it running. Past probeBound
// the whole run is SIGKILLed at once. Being in its own group it no longer
// gets the terminal's Ctrl-C, so a signal to harness meanwhile ends it
// likewise, and the probe returns errProbeInterrupted: the caller stops
// (exit 130).
func probeStreams(path string, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeBound)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var out, errOut limitedBuffer
	p, err := process.Start(context.Background(), process.Options{
		Argv: append([]string{path}, args...),
		Env:  append(config.AgentEnviron(os.Environ()), "NO_COLOR=1", "CI=1"),
		// What still holds the CLI's output a second after it exited is
		// killed with the rest.
		KillGrace: time.Second,
		MaxLine:   probeOutput,
		OnStdout:  func(line []byte, _ int64) { out.line(line) },
		OnStderr:  errOut.line,
	})
	if err != nil {
		return "", "", err
	}
	var caught atomic.Bool
	ended := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			caught.Store(true)
			p.Kill()
		case <-ctx.Done():
			p.Kill()
		case <-ended:
		}
	}()
	o := p.Wait()
	close(ended)
	switch {
	case caught.Load():
		err = errProbeInterrupted
	case ctx.Err() != nil:
		err = errProbeTimeout
	case o.Signal != "":
		err = fmt.Errorf("killed by %s", o.Signal)
	case o.ExitCode != 0:
		err = fmt.Errorf("exit status %d", o.ExitCode)
	}
	return out.String(), errOut.String(), err
}

// probeOutput bounds what a probe keeps of each of the CLI's streams.
const probeOutput = 1 << 20

type limitedBuffer struct{ strings.Builder }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := probeOutput - b.Len(); room > 0 {
		if len(p) > room {
			b.Builder.Write(p[:room])
		} else {
			b.Builder.Write(p)
		}
	}
	return len(p), nil
}

// line keeps one line of a stream and its newline, within the bound.
func (b *limitedBuffer) line(l []byte) {
	_, _ = b.Write(l)
	_, _ = b.Write([]byte{'\n'})
}

// findAgent looks for an agent's binary as a run would (explicit, else
// the pinned installs, else PATH), without the configuration.
func findAgent(e *env, agent, binary string) (*harness.Command, error) {
	t := harness.Task{Agent: agent, Prompt: "-", Binary: binary, SearchDirs: agentDirs(e)}
	c, err := harness.Prepare(t)
	if errors.Is(err, oracle.ErrNoScript) {
		// The oracle's command needs a task's solution script; only its
		// binary (bash) is looked at here.
		t.ExtraArgs = []string{"solve.sh"}
		c, err = harness.Prepare(t)
	}
	return c, err
}

// configuredBinary is the binary the configuration gives agent ([agents.NAME]
// binary), "" for none. One of a protocol other than cli is the binary of
// that protocol's command (an ACP adapter), not the agent's CLI.
func configuredBinary(s *settings, agent string) string {
	ac := s.cfg.Agents[agent]
	if ac.Protocol != "" && ac.Protocol != harness.ProtocolCLI {
		return ""
	}
	return ac.Binary
}

// selfContained reports whether a is a built-in that calls no model (nop
// and oracle run sh and bash): a system tool with no version,
// credentials or flags of its own to check.
func selfContained(a harness.Agent) bool { return mockmodel.CallsNoModel(a.Info) }
