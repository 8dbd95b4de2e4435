package atif_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/event"
)

// TestFirstStepCostAddsAsDecimals: usage that comes before the first
// agent step counts in it, its cost added as the stream adds costs, as
// the decimals written (0.1 and 0.2 make 0.3): it was added in binary
// floating point, 0.30000000000000004, a cost the stream never had.
func TestFirstStepCostAddsAsDecimals(t *testing.T) {
	stream := `{"v":1,"type":"session_start","run":"run_1","seq":1,"ts":1,"agent":"nop","cwd":"/w","pty":false,"argv":[]}
{"v":1,"type":"usage","run":"run_1","seq":2,"ts":2,"input_tokens":1,"cost_usd":0.1}
{"v":1,"type":"message","run":"run_1","seq":3,"ts":3,"role":"assistant","text":"done"}
{"v":1,"type":"usage","run":"run_1","seq":4,"ts":4,"output_tokens":1,"cost_usd":0.2}
{"v":1,"type":"result","run":"run_1","seq":5,"ts":5,"status":"success","text":"done","duration_ms":4,"usage":{"input_tokens":1,"output_tokens":1,"cost_usd":0.3},"cost_usd":0.3,"stats":{"native_lines":2,"unparsed_lines":0,"events":5,"tool_calls":0}}
`
	evs, err := event.ReadAll(strings.NewReader(stream))
	require.NoError(t, err)
	tr := atif.FromEvents(evs, atif.Meta{Run: "run_1", Agent: "nop"})
	var costs []float64
	for _, s := range tr.Steps {
		if s.Metrics != nil && s.Metrics.CostUSD != nil {
			costs = append(costs, *s.Metrics.CostUSD)
		}
	}
	require.Equal(t, []float64{0.3}, costs)
}
