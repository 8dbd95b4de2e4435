package isolate

import (
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// Only the Go toolchain's own variables describe the host's Go: a
// variable that merely starts with GO (Google's credentials, Gemini's
// base URL) is the agent's.
func TestHostEnvGoToolchain(t *testing.T) {
	for _, k := range []string{"GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GO111MODULE"} {
		require.True(t, HostEnv(k), k)
	}
	for _, k := range []string{"GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT",
		"GOOGLE_GENERATIVE_AI_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOPHER", "GO", "GOMAXPROCS"} {
		require.False(t, HostEnv(k), k)
	}
}

// goToolchainEnv is exactly what `go help environment` lists of the go
// command's GO variables: a Go release that adds one fails here.
func TestGoToolchainEnvIsGoHelpEnvironment(t *testing.T) {
	out, err := exec.Command("go", "help", "environment").Output()
	require.NoError(t, err)
	listed := map[string]bool{}
	// Each entry is a line of its own, one tab in ("\tGOPRIVATE, GONOPROXY, GONOSUMDB").
	for _, line := range regexp.MustCompile(`(?m)^\tGO[A-Z0-9_, ]*$`).FindAllString(string(out), -1) {
		for _, k := range regexp.MustCompile(`GO[A-Z0-9_]+`).FindAllString(line, -1) {
			listed[k] = true
		}
	}
	require.Equal(t, listed, goToolchainEnv)
}
