package config

import "strings"

// MCPTokenEnv holds the bearer token of 'harness mcp --listen'.
const MCPTokenEnv = "HARNESS_MCP_TOKEN"

// HarnessSecret reports whether the variable name holds one of harness's
// own secrets: HARNESS_MCP_TOKEN, and any other HARNESS_* variable whose
// name says secret (…TOKEN…, …KEY…, …SECRET…, …PASSWORD…). Such a value
// is for harness alone, never for the agents it runs: an agent holding
// the MCP token could call back and start a full-access run.
func HarnessSecret(name string) bool {
	n := strings.ToUpper(name)
	if !strings.HasPrefix(n, "HARNESS_") {
		return false
	}
	if n == MCPTokenEnv {
		return true
	}
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD"} {
		if strings.Contains(n[len("HARNESS_"):], w) {
			return true
		}
	}
	return false
}

// AgentEnviron returns environ (KEY=VALUE pairs, as os.Environ gives them)
// without harness's own secrets (HarnessSecret): the environment an agent
// starts from. environ is not changed; nil stays nil.
func AgentEnviron(environ []string) []string {
	if environ == nil {
		return nil
	}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !HarnessSecret(name) {
			out = append(out, kv)
		}
	}
	return out
}
