package bench_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// harborTaskWith is the fixture task create-file with text as its
// task.toml and verify as its tests/test.sh.
func harborTaskWith(t *testing.T, text, verify string) bench.Task {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "task.toml"), []byte(text), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tests", "test.sh"), []byte(verify), 0o755))
	tasks, err := bench.LoadTasks(dir)
	require.NoError(t, err)
	return tasks[0]
}

// TestHarborArtifactStaysInArtifacts: the verifier (or the agent, which
// has all of /logs under podman) leaves /logs/artifacts, or a directory
// in it, as a symbolic link to another directory of /logs; a task's
// artifact whose destination goes through it is not written there: no
// destination leads out of the run's artifacts. Before, the artifact
// was written into /logs/verifier through either link.
func TestHarborArtifactStaysInArtifacts(t *testing.T) {
	for _, c := range []struct{ name, link, dest string }{
		{"link in artifacts", "ln -s ../verifier /logs/artifacts/v", "v/planted.txt"},
		{"artifacts a link", "rm -rf /logs/artifacts && ln -s verifier /logs/artifacts", "planted.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			task := harborTaskWith(t,
				"artifacts = [{ source = \"/app/hello.txt\", destination = \""+c.dest+"\" }]\n[verifier]\ntimeout_sec = 60.0\n",
				"#!/bin/bash\n"+c.link+"\necho 1 > /logs/verifier/reward.txt\n")
			runs := t.TempDir()
			rep, err := bench.Run(t.Context(), bench.Plan{Tasks: []bench.Task{task}, Agents: []string{"oracle"}},
				bench.Options{Dir: runs, Keep: true})
			require.NoError(t, err)
			r := rep.Runs[0]
			require.NotNil(t, r.Check, r.Error)
			require.True(t, r.Check.Passed, r.Check.Output)
			require.NoError(t, filepath.WalkDir(runs, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Name() == "planted.txt" {
					require.True(t, strings.Contains(p, "/logs/artifacts/"), "written outside the artifacts: %s", p)
				}
				return err
			}))
			require.Contains(t, joinWarnings(r), "not followed")
		})
	}
}

// TestHarborArtifactDestinations: an artifact's destination is read as
// Harbor's ArtifactConfig reads it: one with a backslash, that names no
// file (".", "./"), or that is manifest.json (Harbor's collection
// manifest) is refused, with what Harbor refused already (absolute, ..);
// "" is the default place. Before, bench took the first three.
func TestHarborArtifactDestinations(t *testing.T) {
	for dest, why := range map[string]string{
		`a\\b`:           "forward slashes",
		`..\\..\\x`:      "forward slashes",
		".":              "name a file or directory",
		"./":             "name a file or directory",
		"manifest.json":  "manifest.json is Harbor's",
		"manifest.json/": "manifest.json is Harbor's",
		"/abs":           "relative",
		"a/../../b":      "..",
	} {
		_, err := loadHarborTOML(t, "artifacts = [\"/app/a\", { source = \"/app\", destination = \""+dest+"\" }]\n[verifier]\n")
		require.ErrorContains(t, err, "task.toml: artifacts[1]: destination ", dest)
		require.ErrorContains(t, err, why, dest)
	}
	h, err := loadHarborTOML(t, "artifacts = [{ source = \"/app/out\", destination = \"\" }, { source = \"/app/m\", destination = \"sub/manifest.json\" }]\n[verifier]\n")
	require.NoError(t, err)
	require.Equal(t, []bench.Artifact{{Source: "/app/out"}, {Source: "/app/m", Destination: "sub/manifest.json"}}, h.Artifacts)
}

// TestHarborArtifactService: an artifact's service is read as Harbor's
// ArtifactConfig reads it (a Docker Compose service name; one but main
// needs an absolute source), and a task that collects one from a
// service but main (a sidecar of a multi-container task) is refused
// (unsupported): bench runs one environment, no compose services.
// Before, service was not read: the artifact was copied from the
// agent's environment, a path of another container.
func TestHarborArtifactService(t *testing.T) {
	for artifact, want := range map[string]string{
		`{ source = "/var/db", service = 5 }`:         "artifacts[0]: want a service that is a string",
		`{ source = "/var/db", service = "-db" }`:     `artifacts[0]: service "-db": want a Docker Compose service name`,
		`{ source = "/var/db", service = "a b" }`:     `artifacts[0]: service "a b": want a Docker Compose service name`,
		`{ source = "var/db", service = "db" }`:       `artifacts[0]: source "var/db" from service "db": want an absolute path`,
		`{ source = "/var/db", service = "db/main" }`: `artifacts[0]: service "db/main": want a Docker Compose service name`,
	} {
		_, err := loadHarborTOML(t, "artifacts = ["+artifact+"]\n[verifier]\n")
		require.ErrorContains(t, err, "task.toml: "+want, artifact)
	}
	h, err := loadHarborTOML(t, "artifacts = [{ source = \"out\", service = \" main \" }, { source = \"/var/db\", service = \"db\" }]\n[verifier]\n")
	require.NoError(t, err)
	require.Equal(t, []bench.Artifact{{Source: "out", Service: "main"}, {Source: "/var/db", Service: "db"}}, h.Artifacts)

	task := harborTaskWith(t, "artifacts = [{ source = \"/app/hello.txt\", service = \"main\" }, { source = \"/var/db\", service = \"db\" }]\n[verifier]\n",
		"#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: []bench.Task{task}, Agents: []string{"oracle"}}, bench.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.Equal(t, bench.ReasonUnsupported, r.Reason, r.Error)
	require.Equal(t, `the task's artifact /var/db is collected from the Docker Compose service "db": bench runs one environment, no compose services`, r.Error)
}
