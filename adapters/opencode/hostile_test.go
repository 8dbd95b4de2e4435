package opencode

import (
	"testing"

	"github.com/agentharness/harness/adapters/adaptertest"
)

func TestHostileLines(t *testing.T) {
	t.Parallel()
	adaptertest.HostileLines(t, New(), testdata)
}

func TestBodiesOwnTheirStrings(t *testing.T) {
	t.Parallel()
	adaptertest.BodiesOwnTheirStrings(t, New(), testdata)
}
