package claude

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

func TestGolden(t *testing.T) {
	t.Parallel()
	seen := adaptertest.Golden(t, New(), "../../testdata/claude")
	for _, tp := range event.Types {
		require.True(t, seen[tp], "no golden has a %s event", tp)
	}
}

func FuzzParse(f *testing.F) {
	adaptertest.Seed(f, "../../testdata/claude")
	f.Fuzz(func(t *testing.T, data []byte) {
		adaptertest.Fuzz(t, New(), data)
	})
}
