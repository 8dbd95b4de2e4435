package atif_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/event"
)

// TestFinalCostEstimatedIsItsCosts: a hand-made result with no cost_usd
// of its own but an estimated cost in its usage has that cost as the
// final metrics' total, estimated, as the session list reads it
// (event.Tally.Cost). The flag was read from the result's own
// cost_estimated, absent: an estimate passed for the agent's cost.
func TestFinalCostEstimatedIsItsCosts(t *testing.T) {
	stream := `{"v":1,"type":"session_start","run":"run_1","seq":1,"ts":1,"agent":"nop","cwd":"/w","pty":false,"argv":[]}
{"v":1,"type":"message","run":"run_1","seq":2,"ts":2,"role":"assistant","text":"done"}
{"v":1,"type":"usage","run":"run_1","seq":3,"ts":3,"input_tokens":1,"cost_usd":0.5,"cost_estimated":true}
{"v":1,"type":"result","run":"run_1","seq":4,"ts":4,"status":"success","text":"done","duration_ms":3,"usage":{"input_tokens":1,"cost_usd":0.5,"cost_estimated":true},"stats":{"native_lines":2,"unparsed_lines":0,"events":4,"tool_calls":0}}
`
	evs, err := event.ReadAll(strings.NewReader(stream))
	require.NoError(t, err)
	var tally event.Tally
	for _, ev := range evs {
		tally.Add(ev)
	}
	usd, estimated := tally.Cost()
	require.True(t, estimated, "the session list's reading")
	fm := atif.FromEvents(evs, atif.Meta{Run: "run_1", Agent: "nop"}).FinalMetrics
	require.NotNil(t, fm.TotalCostUSD)
	require.Equal(t, *usd, *fm.TotalCostUSD)
	require.Equal(t, true, fm.Extra["cost_estimated"], "final_metrics.extra %v", fm.Extra)
}
