package conform

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

func runOf(workdir string, evs ...event.Body) *Run {
	r := &Run{Workdir: workdir}
	for _, b := range evs {
		r.Events = append(r.Events, event.Event{Type: b.EventType(), Body: b})
		if res, ok := b.(*event.Result); ok {
			r.Result = res
		}
	}
	return r
}

// TestCompare: two runs of a scenario agree when they say the same,
// whatever the workdir, the order of parallel calls, or usage one of
// them does not report; every facet that differs is named.
func TestCompare(t *testing.T) {
	exit2 := 2
	a := runOf("/a",
		&event.ToolEnd{CallID: "1", Kind: event.KindShell, Status: event.StatusOK},
		&event.ToolEnd{CallID: "2", Kind: event.KindWrite, Status: event.StatusOK, Paths: []string{"/a/out.txt"}},
		&event.Result{Status: event.ResultSuccess, Text: "done", Usage: event.Usage{InputTokens: 240, OutputTokens: 50}})
	b := runOf("/b",
		&event.ToolEnd{CallID: "x", Kind: event.KindWrite, Status: event.StatusOK, Paths: []string{"out.txt"}},
		&event.ToolEnd{CallID: "y", Kind: event.KindShell, Status: event.StatusOK},
		&event.Result{Status: event.ResultSuccess, Text: "done"})
	require.Empty(t, Compare(a, b))

	c := runOf("/c",
		&event.ToolEnd{CallID: "1", Kind: event.KindShell, Status: event.StatusError, ExitCode: &exit2},
		&event.ToolEnd{CallID: "2", Kind: event.KindEdit, Status: event.StatusOK, Paths: []string{"/c/other.txt"}},
		&event.ToolEnd{CallID: "3", Kind: event.KindRead, Status: event.StatusOK},
		&event.Error{Code: event.ErrProcessExit, Fatal: true, Class: event.ClassCrash},
		&event.Result{Status: event.ResultError, Text: "not done", Usage: event.Usage{InputTokens: 6000, OutputTokens: 600}})
	var facets []string
	for _, d := range Compare(a, c) {
		facets = append(facets, d.Facet)
	}
	require.Equal(t, []string{FacetAnswer, FacetTools, FacetKinds, FacetFiles, FacetStatuses, FacetErrors, FacetUsage}, facets)
	d := Compare(a, c)[len(facets)-1]
	require.Equal(t, "usage: 240 in/50 out vs 6000 in/600 out", d.String())
}
