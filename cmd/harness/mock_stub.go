package main

import "github.com/agentharness/harness"

// attachMock is wired to the scripted model server (mockmodel) once it lands.
func attachMock(e *env, t *harness.Task, scenario string, s *settings) (func(), error) {
	return func() {}, usageErrorf("run: --mock is not available yet")
}
