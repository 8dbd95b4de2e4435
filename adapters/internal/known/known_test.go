package known

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

func TestBounds(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		o    Overflow
		want map[string]bool // what is known after a, b, then c over the total
	}{
		"forget-others": {ForgetOthers, map[string]bool{"a": false, "b": false, "c": true}},
		"keep-others":   {KeepOthers, map[string]bool{"a": true, "b": true, "c": false}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := New(4, 8, tc.o)
			f.Set("a", adapters.Present("aaa"))
			f.Set("b", adapters.Present("bbbb"))
			f.Set("c", adapters.Present("cc"))
			for path, want := range tc.want {
				_, ok := f.Get(path)
				require.Equal(t, want, ok, path)
			}
		})
	}
	f := New(4, 8, ForgetOthers)
	f.Set("a", adapters.Present("aaa"))
	f.Set("a", adapters.Present("aaaaa"))
	_, ok := f.Get("a")
	require.False(t, ok, "a content over the file bound is not kept, and the old one is gone")
	f.Set("gone", adapters.File{})
	got, ok := f.Get("gone")
	require.True(t, ok, "a file known to be absent is known")
	require.Equal(t, adapters.File{}, got)
	f.Set("b", adapters.Present("bbbb"))
	f.Set("b", adapters.Present("bbbb")) // replacing counts once
	f.Set("c", adapters.Present("cccc"))
	_, ok = f.Get("b")
	require.True(t, ok)
	f.TouchedBy(event.KindRead)
	_, ok = f.Get("c")
	require.True(t, ok, "a read changes nothing")
	f.TouchedBy(event.KindShell)
	_, ok = f.Get("c")
	require.False(t, ok, "a shell command may have changed anything")
}

func TestUnseen(t *testing.T) {
	t.Parallel()
	for _, k := range []event.Kind{event.KindShell, event.KindTask, event.KindMCP, event.KindOther} {
		require.True(t, Unseen(k), k)
	}
	for _, k := range []event.Kind{event.KindRead, event.KindSearch, event.KindWeb, event.KindTodo, event.KindWrite, event.KindEdit, event.KindDelete} {
		require.False(t, Unseen(k), k)
	}
}
