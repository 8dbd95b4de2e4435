package harness_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
)

// TestPinReadsAgentsLock: every name@version line of agents.lock is what
// Pin answers for its package, scoped or not.
func TestPinReadsAgentsLock(t *testing.T) {
	lock, err := os.ReadFile("agents.lock")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(lock), "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		i := strings.LastIndex(line, "@")
		require.Positive(t, i, line)
		require.Equal(t, line[i+1:], harness.Pin(line[:i]), line)
		n++
	}
	require.Positive(t, n)
	npm := 0
	for _, ag := range harness.Agents() {
		if ag.Info.NPMPackage != "" {
			require.NotEmpty(t, harness.Pin(ag.Info.NPMPackage), "%s's package %s is pinned", ag.Name(), ag.Info.NPMPackage)
			npm++
		}
	}
	require.Positive(t, npm)
	require.Empty(t, harness.Pin(""))
	require.Empty(t, harness.Pin("@anthropic-ai"), "a scope alone is no package")
	require.Empty(t, harness.Pin("no-such-package"))
}

// TestAgentsLockHashIsTheStamp: the hash in the bench image's tag is the
// one scripts/agents.sh stamps an install of agents.lock with (its own
// pipeline, run here), so scripts/image.sh can refuse a stale install.
func TestAgentsLockHashIsTheStamp(t *testing.T) {
	out, err := exec.Command("bash", "-c",
		`sed -e 's/#.*//' -e 's/[[:space:]]//g' agents.lock | grep -v '^$' | sha256sum | cut -d' ' -f1`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := harness.AgentsLockHash(), strings.TrimSpace(string(out)); got != want {
		t.Fatalf("AgentsLockHash() = %s, scripts/agents.sh's hash = %s", got, want)
	}
}
