package atif_test

import (
	"fmt"
	"strings"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/event"
)

// ExampleCheck converts a run's stream into a trajectory and checks it
// against the stream: Validate's rules, nothing of the stream dropped,
// the usage the stream's.
func ExampleCheck() {
	stream := `{"v":1,"type":"session_start","run":"run_1","seq":1,"ts":1,"agent":"claude","model":"m","cwd":"/w","pty":false,"argv":[]}
{"v":1,"type":"message","run":"run_1","seq":2,"ts":2,"role":"assistant","text":"Done."}
{"v":1,"type":"usage","run":"run_1","seq":3,"ts":3,"input_tokens":10,"output_tokens":5}
{"v":1,"type":"result","run":"run_1","seq":4,"ts":4,"status":"success","text":"Done.","duration_ms":2,"usage":{"input_tokens":10,"output_tokens":5},"stats":{"native_lines":2,"unparsed_lines":0,"events":4,"tool_calls":0}}
`
	evs, err := event.ReadAll(strings.NewReader(stream))
	if err != nil {
		panic(err)
	}
	tr := atif.FromEvents(evs, atif.Meta{Run: "run_1", Prompt: "Say done."})
	fmt.Println(len(tr.Steps), atif.Check(tr, evs))

	tr.Steps = tr.Steps[:1] // the answer dropped
	fmt.Println(atif.Check(tr, evs) != nil)
	// Output:
	// 2 <nil>
	// true
}

// ExampleValidate checks the rules of ATIF beyond its JSON Schema, here
// that step ids count from 1.
func ExampleValidate() {
	tr := &atif.Trajectory{TrajectoryID: "t", Steps: []atif.Step{{StepID: 1}, {StepID: 3}}}
	fmt.Println(atif.Validate(tr))
	// Output:
	// atif: trajectory "t": step 2 has step_id 3
}
