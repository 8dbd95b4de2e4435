// Package process supervises one agent CLI process: it spawns it in its own
// process group, drains stdout (as capped lines) and stderr (keeping a
// bounded tail) for its whole life, runs the idle, tool, hard and linger
// watchdogs, escalates SIGINT/SIGTERM → SIGKILL, and at the end of the run
// finds and kills every process the run started, including ones that left
// the group (setsid, double fork). It implements spec/supervision.md.
//
// The package knows processes, never formats: the caller tells it about tool
// calls (Proc.ToolStarted, Proc.ToolEnded) and the agent's terminal event
// (Proc.AgentDone) from the events it parsed. It never prints or logs;
// everything it has to say comes back as *event.Warning values through
// Options.OnWarning and as the Outcome returned by Proc.Wait.
package process
