package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
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

// Run lists every supported agent, installed or not.
func (c *listCmd) Run(e *env) error {
	var rows []agentStatus
	for _, a := range harness.Agents() {
		st := agentStatus{ID: a.Info.ID, Name: a.Info.Display}
		if c, err := findAgent(e, a.Info.ID, ""); err == nil && c.NotInstalled == nil {
			st.Installed, st.Path, st.Version = true, c.Binary, binaryVersion(c.Binary)
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

// binaryVersion runs "path --version" with a short timeout and returns its
// first line, fit for a terminal.
func binaryVersion(path string) string {
	v, _ := probeVersion(path)
	return v
}

// probeVersion is binaryVersion with the probe's error (errProbeTimeout
// when the CLI did not answer within probeBound).
func probeVersion(path string) (string, error) {
	out, err := probe(path, "--version")
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(termSafe(line)), err
}

// probeBound bounds each probe of an agent binary: a bound for a CLI that
// hangs, not a speed test. On a loaded machine gemini's and opencode's
// --version take 20 s (seen, in the bench image).
var probeBound = time.Minute

// errProbeTimeout: the probed CLI was still running at probeBound.
var errProbeTimeout = errors.New("no answer")

// probe runs the agent binary with args, stdin /dev/null, bounded in time
// and output, and returns what it printed on stdout and stderr.
func probe(path string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	cmd.Env = append(config.AgentEnviron(os.Environ()), "NO_COLOR=1", "CI=1")
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = errProbeTimeout
	}
	return out.String(), err
}

type limitedBuffer struct{ strings.Builder }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := 1<<20 - b.Len(); room > 0 {
		if len(p) > room {
			b.Builder.Write(p[:room])
		} else {
			b.Builder.Write(p)
		}
	}
	return len(p), nil
}

// findAgent looks for an agent's binary as a run would (explicit, else
// the pinned installs, else PATH), without the configuration.
func findAgent(e *env, agent, binary string) (*harness.Command, error) {
	return harness.Prepare(harness.Task{Agent: agent, Prompt: "-", Binary: binary, SearchDirs: agentDirs(e)})
}
