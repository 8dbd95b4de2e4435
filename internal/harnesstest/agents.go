package harnesstest

import "github.com/agentharness/harness"

// MockAgents are the CLIs of harness's table that install from npm
// (pinned in agents.lock) and run on the scripted model, in display
// order: the ones the end-to-end suite and make bench run for real.
// Cursor cannot be installed here; its adapter is held to fixtures.
func MockAgents() []string {
	var ids []string
	for _, a := range harness.Agents() {
		if a.Info.NPMPackage != "" && a.Mock != nil {
			ids = append(ids, a.Name())
		}
	}
	return ids
}
