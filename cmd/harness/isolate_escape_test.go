package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// varTmp is a fresh directory under /var/tmp, which the bwrap sandbox
// shows read-only at its path (its own /tmp and HOME hide the host's).
func varTmp(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "harness-cmd-isolate-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	return base
}

// harness run --isolate bwrap, as root, leaves the agent no capability.
// Before, it had them all (CapEff 000001fffeffffff) and remounted the
// host's /var writable: a host file changed.
func TestRunIsolatedNoCapabilities(t *testing.T) {
	home, base := isolate(t), varTmp(t)
	hostFile := filepath.Join(base, "hostfile")
	require.NoError(t, os.WriteFile(hostFile, []byte("host\n"), 0o644))
	ws := filepath.Join(home, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "remount.sh"), []byte(`#!/bin/bash
grep CapEff /proc/self/status > caps.txt
mount -o remount,bind,rw /var && echo REMOUNTED
echo changed > `+hostFile+` && echo WROTE
mount -t tmpfs x `+base+` && echo MOUNTED
true
`), 0o755))
	r := invoke(t, "", "run", "--agent", "oracle", "-p", "run", "--no-log", "--cwd", ws, "--isolate", "bwrap", "--", "./remount.sh")
	require.Equal(t, 0, r.code, r.stderr)
	for _, w := range []string{"REMOUNTED", "WROTE", "MOUNTED"} {
		require.NotContains(t, r.stdout, w)
	}
	caps, err := os.ReadFile(filepath.Join(ws, "caps.txt"))
	require.NoError(t, err)
	require.Equal(t, "CapEff:\t0000000000000000\n", string(caps))
	b, _ := os.ReadFile(hostFile)
	require.Equal(t, "host\n", string(b), "the host's file changed")
}

// harness run --isolate bwrap does not show the agent the session logs
// (other runs' transcripts) where the host's HOME does not hide them
// (XDG_DATA_HOME elsewhere). Before, a run read the one before's.
func TestRunIsolatedHidesSessionLogs(t *testing.T) {
	home, base := isolate(t), varTmp(t)
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	ws := filepath.Join(home, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, execfile.Write(filepath.Join(ws, "answer.sh"), []byte("#!/bin/bash\necho \"THE_ANSWER_IS_$((6*7))\"\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "peek.sh"), []byte(`#!/bin/bash
grep -rl "THE_ANSWER_IS_$((6*7))" `+base+` > found.txt
true
`), 0o755))
	for _, script := range []string{"./answer.sh", "./peek.sh"} {
		r := invoke(t, "", "run", "--agent", "oracle", "-p", "run", "--cwd", ws, "--isolate", "bwrap", "--", script)
		require.Equal(t, 0, r.code, r.stderr)
	}
	found, err := os.ReadFile(filepath.Join(ws, "found.txt"))
	require.NoError(t, err)
	require.Empty(t, string(found), "the second run read the first's session log")
	out, _ := exec.Command("grep", "-rl", "THE_ANSWER_IS_42", base).Output()
	require.Contains(t, string(out), filepath.Join(base, "data", "harness", "sessions")+"/", "the answer is in the logs")
}

// harness bench --isolate bwrap does not show a run the bench's own
// files where the host's /tmp and HOME do not hide them: --results,
// --events, -o, the session logs and the stored reports. Before, the
// second repeat found the first's answer in --results (its session log
// and trajectory copies) and in --events.
func TestBenchBwrapHidesItsOwn(t *testing.T) {
	src, err := filepath.Abs("../../bench/testdata/harbor/create-file")
	require.NoError(t, err)
	isolate(t)
	base := varTmp(t)
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	// The kept trees go to TMPDIR: base's, removed with it.
	require.NoError(t, os.Mkdir(filepath.Join(base, "tmp"), 0o700))
	t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
	task := filepath.Join(base, "suite", "peek")
	require.NoError(t, os.MkdirAll(filepath.Dir(task), 0o755))
	out, err := exec.Command("cp", "-a", src, task).CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.WriteFile(filepath.Join(task, "solution", "solve.sh"), []byte(`#!/bin/bash
echo "THE_ANSWER_IS_$((6*7))"
grep -rl "THE_ANSWER_IS_$((6*7))" `+base+` > /app/found.txt
echo 'Hello, world!' > /app/hello.txt
`), 0o755))
	res, events, report := filepath.Join(base, "res"), filepath.Join(base, "events.ndjson"), filepath.Join(base, "report.json")
	r := invoke(t, "", "bench", "--tasks", task, "--agents", "oracle", "--repeat", "2", "--parallel", "1", "--isolate", "bwrap",
		"--keep", "--no-progress", "--results", res, "--events", events, "--report", "json", "-o", report)
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	var rep struct {
		Runs []struct {
			Repeat int    `json:"repeat"`
			Tree   string `json:"tree"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Runs, 2)
	for _, run := range rep.Runs {
		found, err := os.ReadFile(filepath.Join(run.Tree, "found.txt"))
		require.NoError(t, err)
		require.Empty(t, string(found), "repeat %d found the answer", run.Repeat)
	}
	out, _ = exec.Command("grep", "-rl", "THE_ANSWER_IS_42", base).Output()
	for _, p := range []string{res + "/logs/000000.ndjson", events, filepath.Join(base, "data", "harness", "sessions") + "/"} {
		require.True(t, strings.Contains(string(out), p), "the answer is not in %s: %s", p, out)
	}
}
