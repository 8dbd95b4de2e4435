package claude

import (
	"testing"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, New(), "../../testdata/claude", event.Types...)
}

func FuzzParse(f *testing.F) {
	adaptertest.Seed(f, "../../testdata/claude")
	f.Fuzz(func(t *testing.T, data []byte) {
		adaptertest.Fuzz(t, New(), data)
	})
}
