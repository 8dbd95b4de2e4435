package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/process"
)

// TestProbeLeavesNoDaemon: a CLI whose --version (or --help) starts a
// daemon that leaves its process group and session (a double fork with
// setsid, and one with an emptied environment) leaves nothing once
// 'harness list', 'harness check' or the probe itself has returned: the
// probe is supervised as a run is. Before, it killed only the CLI's
// process group, and each probe left a daemon behind.
func TestProbeLeavesNoDaemon(t *testing.T) {
	tee, err := exec.LookPath("tee")
	require.NoError(t, err)
	for _, fake := range []string{"double-fork-daemon", "env-i-setsid-daemon"} {
		for _, door := range []string{"list", "check", "probe"} {
			t.Run(fake+"/"+door, func(t *testing.T) {
				home := isolate(t)
				// The CLI is the fake, its stdout (where it announces its
				// daemon) kept in a file too.
				bins, announced := filepath.Join(home, "agents", "node_modules", ".bin"), filepath.Join(home, "announced")
				require.NoError(t, os.MkdirAll(bins, 0o755))
				argv, _ := fakeagent.Command(fake)
				bin := filepath.Join(bins, "claude")
				require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\nPATH=/usr/bin:/bin "+fakeagent.EnvVar+"="+fake+" '"+argv[0]+"' \"$@\" | '"+
					tee+"' -a '"+announced+"'\n"), 0o755))
				switch door {
				case "list":
					// Only this claude is installed: no other CLI is probed.
					t.Setenv("PATH", t.TempDir())
					t.Setenv("HARNESS_AGENTS_DIR", filepath.Join(home, "agents"))
					r := invoke(t, "", "list")
					require.Equal(t, 0, r.code, r.stderr)
					require.Regexp(t, `(?m)^claude\s.*\syes\s.*`+regexp.QuoteMeta(bin)+`$`, r.stdout)
				case "check":
					r := invoke(t, "", "check", "claude", "--binary", bin)
					require.Contains(t, r.stdout, "ok    version: ", r.stderr)
				case "probe":
					out, _, err := probeStreams(bin, "--version")
					require.NoError(t, err)
					require.Contains(t, out, `"subtype":"fake_child"`, "the probe keeps the CLI's stdout")
				}
				data, err := os.ReadFile(announced)
				require.NoError(t, err)
				daemons := regexp.MustCompile(`"subtype":"fake_child","pid":(\d+)`).FindAllStringSubmatch(string(data), -1)
				require.NotEmpty(t, daemons, "the fake announced no daemon: %s", data)
				for _, m := range daemons {
					pid, err := strconv.Atoi(m[1])
					require.NoError(t, err)
					if process.Alive(pid) {
						_ = syscall.Kill(pid, syscall.SIGKILL) // not left running by the failed test
						t.Errorf("the daemon %d of %s outlived harness %s", pid, bin, door)
					}
				}
			})
		}
	}
}
