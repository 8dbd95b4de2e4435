package harness

import (
	"strings"

	"github.com/agentharness/harness/internal/privtmp"
)

// makePrivateTmp makes the temporary directory of a run whose agent
// leaves files in its own at every start (adapters.Agent.PrivateTmp),
// under the one env names (TMPDIR, else /tmp), and returns it with env
// pointing TMPDIR, TMP and TEMP at it. Where it cannot be made, it returns
// nil and env as it is: the agent keeps the user's directory.
func makePrivateTmp(env []string) (*privtmp.Dir, []string) {
	parent := "/tmp"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			parent = v
		}
	}
	d, err := privtmp.Make(parent, "harness-tmp-")
	if err != nil {
		return nil, env
	}
	return d, mergeEnv(env, d.Env())
}
