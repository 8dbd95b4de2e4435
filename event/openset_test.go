package event

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenSet checks the set against a map through random adds and
// removes, with as many calls open as to cross openLinear both ways.
func TestOpenSet(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var o openSet
	want := map[string]int64{}
	var n int64
	for step := 0; step < 20000; step++ {
		// Drift between few and many open calls.
		limit := 3
		if step/2000%2 == 1 {
			limit = 100
		}
		id := "call_" + strconv.Itoa(rng.IntN(150))
		if _, open := want[id]; !open && len(want) < limit && rng.IntN(2) == 0 {
			n++
			o.add(openCall{id: id, n: n})
			want[id] = n
		} else {
			o.remove(id)
			delete(want, id)
		}
		require.Equal(t, len(want), o.len())
		for id, n := range want {
			c, ok := o.get(id)
			require.True(t, ok, id)
			require.Equal(t, n, c.n)
		}
		_, ok := o.get("nope")
		require.False(t, ok)
		all := o.oldestFirst()
		require.Len(t, all, len(want))
		for i := 1; i < len(all); i++ {
			require.Less(t, all[i-1].n, all[i].n, "oldest first")
		}
	}
}
