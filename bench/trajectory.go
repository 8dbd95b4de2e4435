package bench

import (
	"path/filepath"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/logger"
)

// writeTrajectory writes the finished run's trajectory in ATIF beside
// its session log, as Harbor writes a trial's agent/trajectory.json: the
// prompt first (redacted as the log is, by redact: harness.Run.Redactor),
// then what the log's stream says. A run without a session log has none;
// a failure to write one is the run's error, not its outcome.
func writeTrajectory(rr *RunReport, t harness.Task, redact *logger.Redactor) {
	if rr.Log == "" {
		return
	}
	prompt := redact.RedactString(t.Prompt)
	path, err := atif.WriteLog(filepath.Dir(rr.Log), t.Run, prompt)
	if err != nil {
		if rr.Error == "" {
			rr.Error = "writing the trajectory: " + err.Error()
		}
		return
	}
	rr.Trajectory = path
}
