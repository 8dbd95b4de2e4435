package cursor

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// openCalls keeps calls as a map would, past maxListed open calls too.
func TestOpenCallsAsAMap(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, keys := range []uint64{4, maxListed, 3 * maxListed} {
		var o openCalls
		m := map[uint64]int64{}
		for i := range 20000 {
			key, ts := r.Uint64N(keys), int64(i)
			if r.IntN(2) == 0 {
				o.start(key, ts)
				m[key] = ts
				continue
			}
			got, ok := o.end(key)
			want, wantOK := m[key]
			delete(m, key)
			require.Equal(t, wantOK, ok, "key %d", key)
			require.Equal(t, want, got, "key %d", key)
		}
	}
}
