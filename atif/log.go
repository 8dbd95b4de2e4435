package atif

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/logger"
)

// Load returns the trajectory of run (an id or unique prefix) from its
// session log in dir: its event stream, and its meta for what the stream
// may not say. prompt is the run's whole prompt, redacted as the log is,
// or "": then the meta's prompt preview is the prompt when it is whole
// (shorter than logger.PromptPreviewLen), else the trajectory has none.
// An unknown run is logger.ErrNotFound (or ErrAmbiguous); a stream that
// does not decode is an error naming its line, but for a last line cut
// mid-write (event.ReadLog): the trajectory is of the lines before it, and
// its extra.log_cut and notes say so.
func Load(dir, run, prompt string) (*Trajectory, error) {
	m, err := logger.Load(dir, run)
	if err != nil {
		return nil, err
	}
	f, err := logger.OpenFile(dir, m.Run, logger.ExtEvents) // not a FIFO: it would wait for a writer
	if err != nil {
		return nil, fmt.Errorf("atif: %w", err)
	}
	defer f.Close()
	evs, cut, err := event.ReadLog(f)
	if err != nil {
		return nil, fmt.Errorf("atif: %s%s: %w", m.Run, logger.ExtEvents, err)
	}
	if prompt == "" && utf8.RuneCountInString(m.PromptPreview) < logger.PromptPreviewLen {
		prompt = m.PromptPreview
	}
	t := FromEvents(evs, Meta{Run: m.Run, Agent: m.Agent, AgentVersion: m.AgentVersion, Model: m.Model,
		SessionID: m.SessionID, Prompt: prompt})
	if cut {
		t.Extra["log_cut"] = true
		t.Notes = strings.TrimSpace(t.Notes + " " + noteCut)
	}
	return t, nil
}

const noteCut = "The session log ends in a line cut short (its harness was stopped, or is still writing it): " +
	"the trajectory is of the lines before it."

// WriteLog writes the trajectory of run beside its session log, as
// dir/<run>.trajectory.json (logger.ExtTrajectory, 0600 like the log),
// replacing it whole (a reader sees the old file or the new), and
// returns its path.
func WriteLog(dir, run, prompt string) (string, error) {
	t, err := Load(dir, run, prompt)
	if err != nil {
		return "", err
	}
	data, err := Marshal(t)
	if err != nil {
		return "", fmt.Errorf("atif: %w", err)
	}
	path := logger.Path(dir, t.TrajectoryID, logger.ExtTrajectory)
	if err := regfile.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("atif: %w", err)
	}
	return path, nil
}
