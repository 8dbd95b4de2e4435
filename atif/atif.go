// Package atif turns a run's unified event stream into a trajectory in
// Harbor's Agent Trajectory Interchange Format (ATIF), version
// SchemaVersion: the format Harbor writes as a trial's agent/trajectory.json.
//
// The mapping (docs/bench.md, "Trajectories") is exact rather than
// plausible: every assistant message, reasoning block and main-agent tool
// call of the stream is in exactly one step, each tool call's tool_end is
// its observation, and the token counts of the steps add up to the final
// metrics, which are the result's usage. Check proves it for a trajectory
// against its stream. The package never prints and never fails on a
// stream: whatever the events, FromEvents returns a trajectory.
package atif

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"time"

	"github.com/agentharness/harness/event"
)

// SchemaVersion is the ATIF version the trajectories are written in.
const SchemaVersion = "ATIF-v1.7"

// Schema is the JSON Schema (draft 2020-12) of an ATIF-v1.7 trajectory,
// derived from Harbor's published models (schema.json says from what).
//
//go:embed schema.json
var Schema []byte

// Trajectory is ATIF's root object.
type Trajectory struct {
	SchemaVersion        string         `json:"schema_version"`
	SessionID            string         `json:"session_id,omitempty"`
	TrajectoryID         string         `json:"trajectory_id,omitempty"`
	Agent                Agent          `json:"agent"`
	Steps                []Step         `json:"steps"`
	Notes                string         `json:"notes,omitempty"`
	FinalMetrics         *FinalMetrics  `json:"final_metrics,omitempty"`
	Extra                map[string]any `json:"extra,omitempty"`
	SubagentTrajectories []Trajectory   `json:"subagent_trajectories,omitempty"`
}

// Agent names the agent that made the trajectory.
type Agent struct {
	Name      string         `json:"name"`
	Version   string         `json:"version"`
	ModelName string         `json:"model_name,omitempty"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// Step is a user prompt, a system event or one agent turn (reasoning,
// message, tool calls and their observations). Message is always present
// ("" for a turn that only called tools).
type Step struct {
	StepID           int            `json:"step_id"`
	Timestamp        string         `json:"timestamp,omitempty"`
	Source           string         `json:"source"`
	Message          string         `json:"message"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall     `json:"tool_calls,omitempty"`
	Observation      *Observation   `json:"observation,omitempty"`
	Metrics          *Metrics       `json:"metrics,omitempty"`
	Extra            map[string]any `json:"extra,omitempty"`
}

// ToolCall is one tool call of an agent step.
type ToolCall struct {
	ToolCallID   string          `json:"tool_call_id"`
	FunctionName string          `json:"function_name"`
	Arguments    json.RawMessage `json:"arguments"`
	Extra        map[string]any  `json:"extra,omitempty"`
}

// Observation holds the results of a step's tool calls.
type Observation struct {
	Results []ObservationResult `json:"results"`
}

// ObservationResult is what one tool call gave back.
type ObservationResult struct {
	SourceCallID          string                  `json:"source_call_id,omitempty"`
	Content               string                  `json:"content"`
	SubagentTrajectoryRef []SubagentTrajectoryRef `json:"subagent_trajectory_ref,omitempty"`
	Extra                 map[string]any          `json:"extra,omitempty"`
}

// SubagentTrajectoryRef points at an embedded subagent trajectory.
type SubagentTrajectoryRef struct {
	TrajectoryID string `json:"trajectory_id"`
}

// Metrics is a step's usage. PromptTokens counts every input token
// (harness's input, cache read and cache write tokens), CachedTokens the
// cache reads among them, CompletionTokens the output (reasoning
// included); Extra keeps the stream's own usage fields, which add up
// exactly.
type Metrics struct {
	PromptTokens     int64          `json:"prompt_tokens"`
	CompletionTokens int64          `json:"completion_tokens"`
	CachedTokens     int64          `json:"cached_tokens"`
	CostUSD          *float64       `json:"cost_usd,omitempty"`
	Extra            map[string]any `json:"extra,omitempty"`
}

// FinalMetrics are the run's totals: the result's usage and cost.
type FinalMetrics struct {
	TotalPromptTokens     int64          `json:"total_prompt_tokens"`
	TotalCompletionTokens int64          `json:"total_completion_tokens"`
	TotalCachedTokens     int64          `json:"total_cached_tokens"`
	TotalCostUSD          *float64       `json:"total_cost_usd,omitempty"`
	TotalSteps            int            `json:"total_steps"`
	Extra                 map[string]any `json:"extra,omitempty"`
}

// Meta is what the caller knows of the run beyond its stream: each field
// is used where the stream does not say it (a stream cut before its
// session_start has no agent). Prompt is the run's whole prompt, or "":
// a one-prompt run's stream does not carry it, so the trajectory's first
// user step is there only when the caller knows the prompt whole.
type Meta struct {
	Run          string
	Agent        string
	AgentVersion string
	Model        string
	SessionID    string
	Prompt       string
}

// tokens is u without its cost: the fields that add up exactly.
func tokens(u event.Usage) event.Usage {
	u.CostUSD, u.CostEstimated = 0, false
	return u
}

// fields are the stream's own usage fields, as a step's or the final
// metrics' extra keeps them: usage events add up to them exactly.
func fields(u event.Usage) map[string]any {
	return map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"cache_read_tokens": u.CacheReadTokens, "cache_write_tokens": u.CacheWriteTokens,
		"reasoning_tokens": u.ReasoningTokens}
}

// prompt is ATIF's prompt_tokens: every input token, cached or not.
func prompt(u event.Usage) int64 { return u.AllInput() }

func timestamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// Marshal encodes t as indented JSON with a final newline, the form of a
// trajectory file. <, > and & stay as they are (a command's "a > b &&
// c" reads as the agent wrote it), as Harbor's own files have them.
func Marshal(t *Trajectory) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
