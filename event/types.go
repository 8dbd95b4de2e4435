// Package event owns harness's unified event stream, version 1: the closed
// set of event types, their NDJSON encoding, the Stream that stamps and
// orders a run's events and enforces the stream invariants at the source, the
// invariant checker every package's tests use, and the stream's JSON Schema.
//
// The normative contract is docs/events.md; this package is its code form.
// It imports nothing else of harness.
package event

import (
	"encoding/json"
	"math"
	"strconv"
)

// Version is the schema version stamped on every event as "v".
const Version = 1

// Type names an event type. The set is closed: Valid reports membership.
type Type string

// The event types of version 1.
const (
	TypeSessionStart   Type = "session_start"
	TypeTextDelta      Type = "text_delta"
	TypeReasoningDelta Type = "reasoning_delta"
	TypeMessage        Type = "message"
	TypeReasoning      Type = "reasoning"
	TypeToolStart      Type = "tool_start"
	TypeToolEnd        Type = "tool_end"
	TypeUsage          Type = "usage"
	TypeWarning        Type = "warning"
	TypeError          Type = "error"
	TypeResult         Type = "result"
	TypeNative         Type = "native"
	// The types of a live session (turns.go): only a session emits them.
	TypeTurnStart         Type = "turn_start"
	TypeTurnEnd           Type = "turn_end"
	TypePermissionRequest Type = "permission_request"
)

// Types lists every event type, in the order of the spec.
var Types = []Type{
	TypeSessionStart, TypeTextDelta, TypeReasoningDelta, TypeMessage,
	TypeReasoning, TypeToolStart, TypeToolEnd, TypeUsage, TypeWarning,
	TypeError, TypeResult, TypeNative, TypeTurnStart, TypeTurnEnd, TypePermissionRequest,
}

// Valid reports whether t is one of the version 1 types.
func (t Type) Valid() bool {
	switch t {
	case TypeSessionStart, TypeTextDelta, TypeReasoningDelta, TypeMessage,
		TypeReasoning, TypeToolStart, TypeToolEnd, TypeUsage, TypeWarning,
		TypeError, TypeResult, TypeNative, TypeTurnStart, TypeTurnEnd, TypePermissionRequest:
		return true
	}
	return false
}

// Body is the type-specific payload of an event. Exactly the pointer types
// in this file implement it.
type Body interface {
	EventType() Type
}

// Event is one line of the stream: the envelope plus its body. The envelope
// fields are set by Stream; adapters produce bare bodies.
type Event struct {
	V    int
	Type Type
	Run  string
	Seq  int64
	TS   int64 // Unix milliseconds
	Body Body
}

// SessionStart is always the first event of a run, exactly once.
type SessionStart struct {
	Agent        string   `json:"agent"`
	AgentVersion string   `json:"agent_version,omitempty"`
	Model        string   `json:"model,omitempty"`
	SessionID    string   `json:"session_id,omitempty"`
	Cwd          string   `json:"cwd"`
	PID          int      `json:"pid,omitempty"`
	PTY          bool     `json:"pty"`
	Argv         []string `json:"argv"`
	Tools        []string `json:"tools,omitempty"`
}

// TextDelta is a streamed piece of assistant text.
type TextDelta struct {
	Text         string `json:"text"`
	MessageID    string `json:"message_id,omitempty"`
	ParentCallID string `json:"parent_call_id,omitempty"` // set when a sub-agent (a task tool call) speaks
}

// ReasoningDelta is a streamed piece of reasoning text.
type ReasoningDelta struct {
	Text         string `json:"text"`
	ParentCallID string `json:"parent_call_id,omitempty"`
}

// Roles of a Message.
const (
	RoleAssistant = "assistant"
	RoleUser      = "user"
	RoleSystem    = "system"
)

// Message is a complete message. The deltas of one message, when the agent
// streamed them, concatenate to Text.
type Message struct {
	Role         string `json:"role"`
	Text         string `json:"text"`
	MessageID    string `json:"message_id,omitempty"`
	ParentCallID string `json:"parent_call_id,omitempty"`
	Truncated    bool   `json:"truncated,omitempty"`
}

// Reasoning is a complete reasoning block.
type Reasoning struct {
	Text         string `json:"text"`
	ParentCallID string `json:"parent_call_id,omitempty"`
	Truncated    bool   `json:"truncated,omitempty"`
}

// Kind is a tool call's normalized kind.
type Kind string

// The tool kinds.
const (
	KindShell  Kind = "shell"
	KindRead   Kind = "read"
	KindWrite  Kind = "write"
	KindEdit   Kind = "edit"
	KindDelete Kind = "delete"
	KindSearch Kind = "search"
	KindWeb    Kind = "web"
	KindMCP    Kind = "mcp"
	KindTodo   Kind = "todo"
	KindTask   Kind = "task"
	KindOther  Kind = "other"
)

// Kinds returns every tool kind, in the order of their constants.
func Kinds() []Kind {
	return []Kind{KindShell, KindRead, KindWrite, KindEdit, KindDelete, KindSearch,
		KindWeb, KindMCP, KindTodo, KindTask, KindOther}
}

// Valid reports whether k is one of the tool kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindShell, KindRead, KindWrite, KindEdit, KindDelete, KindSearch,
		KindWeb, KindMCP, KindTodo, KindTask, KindOther:
		return true
	}
	return false
}

// ToolStart opens a tool call. CallID is unique within the run.
type ToolStart struct {
	CallID         string          `json:"call_id"`
	Name           string          `json:"name"`
	Kind           Kind            `json:"kind"`
	Input          json.RawMessage `json:"input"` // a JSON object; "{}" when the agent gave none
	InputTruncated bool            `json:"input_truncated,omitempty"`
	Command        string          `json:"command,omitempty"`
	Path           string          `json:"path,omitempty"`
	// Paths lists every file a write/edit/delete call will touch when it
	// touches more than Path (a Codex change set); Path is the first.
	Paths        []string `json:"paths,omitempty"`
	ParentCallID string   `json:"parent_call_id,omitempty"` // the task call of the sub-agent that made this call
	// Creates says the call may add each file it names and writes it in
	// place (Codex's change kind add; Gemini's write_file, which makes the
	// file when absent): a live run takes a file whose inode was born
	// during the run, and that nothing else of the run may have made, as
	// absent before the call. It is never emitted.
	Creates bool `json:"-"`

	// inputCompact: the Stream found Input valid and made it compact, so
	// the encoder copies it as it is.
	inputCompact bool
}

// Tool call statuses.
const (
	StatusOK        = "ok"
	StatusError     = "error"
	StatusTimeout   = "timeout"
	StatusDenied    = "denied"
	StatusCancelled = "cancelled"
)

// ToolEnd closes the tool call with the same CallID, exactly once.
type ToolEnd struct {
	CallID          string   `json:"call_id"`
	Name            string   `json:"name"`
	Kind            Kind     `json:"kind"`
	Status          string   `json:"status"`
	Output          string   `json:"output,omitempty"`
	OutputTruncated bool     `json:"output_truncated,omitempty"`
	ExitCode        *int     `json:"exit_code,omitempty"`
	DurationMS      int64    `json:"duration_ms"`
	Synthetic       bool     `json:"synthetic,omitempty"`
	Paths           []string `json:"paths,omitempty"`
	Diff            string   `json:"diff,omitempty"`
	DiffTruncated   bool     `json:"diff_truncated,omitempty"`
	// DiffSkipped says why a write/edit/delete call has no diff although
	// one was looked for (DiffSkipped* reasons): never a wrong diff.
	DiffSkipped string `json:"diff_skipped,omitempty"`
	// AgentPatch is a patch the agent printed that the stream alone cannot
	// hold to be exact (OpenCode's edit metadata: its common indentation
	// may have been trimmed). It is never emitted: a live run checks it
	// against the file on disk and makes the diff from it only when the
	// patch, reversed, applies exactly to the file as the call left it.
	AgentPatch string `json:"-"`
	// DurationNative says DurationMS is the agent's own (its timestamps'
	// difference), kept even when 0: a call whose start and end carry the
	// same millisecond took no time the agent can tell, not the parser's.
	DurationNative bool `json:"-"`
}

// Why a file tool's diff was left out (ToolEnd.DiffSkipped).
const (
	DiffSkippedTooLarge = "too_large" // a file over the harness's size cap
	DiffSkippedBinary   = "binary"    // a file that is not text
	DiffSkippedUnknown  = "unknown"   // the content before or after the call could not be known
	// DiffSkippedNotRegular: the path is not a regular file (a named pipe,
	// a device, a socket, a directory), which is never opened to be read.
	DiffSkippedNotRegular = "not_regular"
)

// Usage is an increment of token use and cost: one per model call or step.
// Token fields follow the meanings of docs/events.md (input excludes cache).
type Usage struct {
	InputTokens      int64   `json:"input_tokens,omitempty"`
	OutputTokens     int64   `json:"output_tokens,omitempty"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int64   `json:"reasoning_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	CostEstimated    bool    `json:"cost_estimated,omitempty"`
}

// Add adds o to u. A sum past the largest int64 stays there: counts
// never wrap round to negative.
func (u *Usage) Add(o Usage) {
	for _, f := range [...]struct{ to, from *int64 }{{&u.InputTokens, &o.InputTokens}, {&u.OutputTokens, &o.OutputTokens},
		{&u.CacheReadTokens, &o.CacheReadTokens}, {&u.CacheWriteTokens, &o.CacheWriteTokens}, {&u.ReasoningTokens, &o.ReasoningTokens}} {
		if sum := *f.to + *f.from; *f.from > 0 && sum < *f.to {
			*f.to = math.MaxInt64
		} else {
			*f.to = sum
		}
	}
	u.CostUSD = addCost(u.CostUSD, o.CostUSD)
	u.CostEstimated = u.CostEstimated || o.CostEstimated
}

// addCost is a+b, stopping at the largest float64 rather than becoming
// +Inf, which no JSON can hold. Costs arrive as decimals (0.1, then
// 0.2), so they are added as the decimals they were written as: binary
// addition would make that 0.30000000000000004, a total no agent sent.
func addCost(a, b float64) float64 {
	sum := a + b
	if math.IsInf(sum, 0) {
		return math.MaxFloat64
	}
	if !(a > 0 && b > 0) { // nothing to align; garbage is the caller's (dropNegative)
		return sum
	}
	if d, ok := decimalSum(a, b); ok {
		return d
	}
	return sum
}

// decimalSum adds a and b, non-negative and finite, as the shortest
// decimals that name them, and rounds the sum to float64 once. It says
// false when the two, aligned to one exponent, need more than 18 digits.
func decimalSum(a, b float64) (float64, bool) {
	ma, ea := decimalOf(a)
	mb, eb := decimalOf(b)
	if ea < eb { // b's digits move left to a's exponent
		ma, ea, mb, eb = mb, eb, ma, ea
	}
	for ; ea > eb; ea-- {
		if ma > 1e17 {
			return 0, false
		}
		ma *= 10
	}
	m := ma + mb
	// m and 10^-e exact in a float64: one division, rounded once (the
	// sums of costs, 0.0015 and the like, all take this way).
	if m < 1<<53 && eb < 0 && eb >= -22 {
		return float64(m) / pow10[-eb], true
	}
	var buf [48]byte
	text := strconv.AppendUint(buf[:0], m, 10)
	text = append(text, 'e')
	text = strconv.AppendInt(text, int64(eb), 10)
	sum, err := strconv.ParseFloat(string(text), 64)
	return sum, err == nil && !math.IsInf(sum, 0)
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalOf is v, positive and finite, as m×10^e, m the at most 17
// digits of v's shortest decimal.
func decimalOf(v float64) (m uint64, e int) {
	var buf [32]byte
	text := strconv.AppendFloat(buf[:0], v, 'e', -1, 64) // d.ddde±dd
	i, frac := 0, -1
	for ; text[i] != 'e'; i++ {
		if text[i] == '.' {
			frac = 0
			continue
		}
		m = m*10 + uint64(text[i]-'0')
		if frac >= 0 {
			frac++
		}
	}
	neg := text[i+1] == '-'
	for _, c := range text[i+2:] {
		e = e*10 + int(c-'0')
	}
	if neg {
		e = -e
	}
	return m, e - max(frac, 0)
}

// garbageCost reports whether c is no cost at all: negative, NaN or
// infinite.
func garbageCost(c float64) bool { return !(c >= 0) || math.IsInf(c, 1) }

// AllInput is every input token of u: input, cache read and cache
// written (what OpenTelemetry's input_tokens and ATIF's prompt_tokens
// count), stopping at the largest int64 rather than wrapping negative.
func (u Usage) AllInput() int64 {
	n := Usage{InputTokens: u.InputTokens}
	n.Add(Usage{InputTokens: u.CacheReadTokens})
	n.Add(Usage{InputTokens: u.CacheWriteTokens})
	return n.InputTokens
}

// dropNegative counts what an agent reported below zero, or a cost that
// is no number (garbage: no count or cost can be), as zero, and reports
// whether there was any.
func (u *Usage) dropNegative() bool {
	dropped := false
	for _, f := range [...]*int64{&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.ReasoningTokens} {
		if *f < 0 {
			*f, dropped = 0, true
		}
	}
	if garbageCost(u.CostUSD) {
		u.CostUSD, dropped = 0, true
	}
	if u.CostUSD == 0 {
		u.CostUSD = 0 // -0 too, which sums and prints as "-0"
	}
	return dropped
}

// garbageUsage is the warning of a count or cost the agent reported that
// no count or cost can be (dropNegative).
func garbageUsage() *Warning {
	return &Warning{Code: WarnUsageMismatch, Message: "the agent reported a negative token count, or a cost that is negative or not a finite number; it counts as 0"}
}

// IsZero reports whether u counts nothing.
func (u Usage) IsZero() bool { return u == Usage{} }

// Warning codes.
const (
	WarnIdle                = "idle"
	WarnToolStalled         = "tool_stalled"
	WarnStderrTruncated     = "stderr_truncated"
	WarnLineTruncated       = "line_truncated"
	WarnUnparsedLine        = "unparsed_line"
	WarnUsageMismatch       = "usage_mismatch" // the agent's totals fall short of its per-call usage
	WarnAgentStderr         = "agent_stderr"
	WarnLingeredAfterResult = "lingered_after_result"
	WarnConfig              = "config"
	WarnAgentRetry          = "agent_retry"   // the agent retries a failed model call
	WarnAgentWarning        = "agent_warning" // the agent reported a non-fatal problem
)

// Warning reports something the reader should know; the run goes on.
type Warning struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	IdleMS    int64  `json:"idle_ms,omitempty"`
	AbortInMS int64  `json:"abort_in_ms,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms,omitempty"`
	BudgetMS  int64  `json:"budget_ms,omitempty"`
	Bytes     int64  `json:"bytes,omitempty"` // size of what was cut or dropped
	Line      string `json:"line,omitempty"`  // a preview of the line concerned
	Truncated bool   `json:"truncated,omitempty"`
	// LineGiven has Bytes and Line written even when they are empty: an
	// unparsed line's warning has both, also for an empty line. Decode
	// sets it when the line has both.
	LineGiven bool `json:"-"`
}

// Error codes.
const (
	ErrNotInstalled = "not_installed"
	ErrSpawnFailed  = "spawn_failed"
	ErrBadConfig    = "bad_config"
	ErrIdleTimeout  = "idle_timeout"
	ErrHardTimeout  = "hard_timeout"
	ErrInterrupted  = "interrupted"
	ErrProcessExit  = "process_exit"
	ErrAgentError   = "agent_error"
	ErrParseError   = "parse_error"
)

// Error classes: what kind of failure the agent's text or status shows.
const (
	ClassAuth            = "auth"
	ClassRateLimit       = "rate_limit"
	ClassOverloaded      = "overloaded"
	ClassContextOverflow = "context_overflow"
	ClassBadRequest      = "bad_request"
	ClassNetwork         = "network"
	ClassCrash           = "crash"
	// ClassServerError: the model's server failed (HTTP 5xx other than
	// 503/529, which are overloaded); the error carries http_status.
	ClassServerError = "server_error"
	// ClassProtocol: the agent broke its session protocol (ACP): no answer
	// to initialize, a version we do not speak, invalid JSON, a call of a
	// method the harness did not advertise.
	ClassProtocol = "protocol"
)

// Error reports a failure. A fatal error ends the run and carries Partial.
type Error struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Fatal    bool     `json:"fatal"`
	Class    string   `json:"class,omitempty"`
	Partial  *Partial `json:"partial,omitempty"`
	Killed   *bool    `json:"killed,omitempty"`
	Signal   string   `json:"signal,omitempty"`
	Hint     string   `json:"hint,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	Tried    []string `json:"tried,omitempty"` // not_installed: the binaries and places tried
	Status   int      `json:"http_status,omitempty"`
}

// Partial is what a fatal error saves of a run that did not finish.
type Partial struct {
	StderrTail        string         `json:"stderr_tail"`
	LastEvents        []EventSummary `json:"last_events"`
	Events            int64          `json:"events"`
	LastActivityMSAgo int64          `json:"last_activity_ms_ago"`
}

// EventSummary is one line about an earlier event.
type EventSummary struct {
	Seq     int64  `json:"seq"`
	Type    Type   `json:"type"`
	Summary string `json:"summary,omitempty"`
}

// Result statuses.
const (
	ResultSuccess   = "success"
	ResultError     = "error"
	ResultTimeout   = "timeout"
	ResultCancelled = "cancelled"
)

// Result is always the last event, exactly once.
type Result struct {
	Status            string   `json:"status"`
	Text              string   `json:"text"`
	SessionID         string   `json:"session_id,omitempty"`
	ResumedSessionID  string   `json:"resumed_session_id,omitempty"` // the id given to --resume, when the agent answered with a new one
	DurationMS        int64    `json:"duration_ms"`
	NumTurns          int      `json:"num_turns,omitempty"`
	Usage             Usage    `json:"usage"`
	CostUSD           *float64 `json:"cost_usd,omitempty"`
	CostEstimated     bool     `json:"cost_estimated,omitempty"`
	ExitCode          *int     `json:"exit_code,omitempty"`
	Signal            string   `json:"signal,omitempty"`
	Stats             Stats    `json:"stats"`
	TextTruncated     bool     `json:"text_truncated,omitempty"`
	LingeredAfterDone bool     `json:"lingered,omitempty"`
	// DurationNative says DurationMS is the agent's own (reported, or the
	// span of its timestamps), kept by harness parse even when 0.
	DurationNative bool `json:"-"`
	// Again says the report is an earlier one's again, with the usage and
	// cost of what followed it (adapters/claude: a turn the CLI began by
	// itself after a run's answer): the answer is still that earlier
	// report's, so a Text left empty falls back to what preceded it.
	Again bool `json:"-"`
}

// Stats counts what a run read and wrote.
type Stats struct {
	NativeLines   int64 `json:"native_lines"`
	UnparsedLines int64 `json:"unparsed_lines"`
	Events        int64 `json:"events"`
	ToolCalls     int64 `json:"tool_calls"`
}

// Streams of a Native event.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// Native carries one of the agent's own lines, only when asked for (--raw).
// Line is the line as JSON when it parses, else a JSON string.
type Native struct {
	Line      json.RawMessage `json:"line"`
	Stream    string          `json:"stream"`
	Truncated bool            `json:"truncated,omitempty"`
}

func (*SessionStart) EventType() Type   { return TypeSessionStart }
func (*TextDelta) EventType() Type      { return TypeTextDelta }
func (*ReasoningDelta) EventType() Type { return TypeReasoningDelta }
func (*Message) EventType() Type        { return TypeMessage }
func (*Reasoning) EventType() Type      { return TypeReasoning }
func (*ToolStart) EventType() Type      { return TypeToolStart }
func (*ToolEnd) EventType() Type        { return TypeToolEnd }
func (*Usage) EventType() Type          { return TypeUsage }
func (*Warning) EventType() Type        { return TypeWarning }
func (*Error) EventType() Type          { return TypeError }
func (*Result) EventType() Type         { return TypeResult }
func (*Native) EventType() Type         { return TypeNative }

// NewBody returns a zero body of type t, or nil when t is not a valid type.
func NewBody(t Type) Body {
	switch t {
	case TypeSessionStart:
		return &SessionStart{}
	case TypeTextDelta:
		return &TextDelta{}
	case TypeReasoningDelta:
		return &ReasoningDelta{}
	case TypeMessage:
		return &Message{}
	case TypeReasoning:
		return &Reasoning{}
	case TypeToolStart:
		return &ToolStart{}
	case TypeToolEnd:
		return &ToolEnd{}
	case TypeUsage:
		return &Usage{}
	case TypeWarning:
		return &Warning{}
	case TypeError:
		return &Error{}
	case TypeResult:
		return &Result{}
	case TypeNative:
		return &Native{}
	case TypeTurnStart:
		return &TurnStart{}
	case TypeTurnEnd:
		return &TurnEnd{}
	case TypePermissionRequest:
		return &PermissionRequest{}
	}
	return nil
}

// Int returns a pointer to n, for the optional integer fields.
func Int(n int) *int { return &n }

// Bool returns a pointer to b, for the optional boolean fields.
func Bool(b bool) *bool { return &b }

// Float returns a pointer to f, for the optional float fields.
func Float(f float64) *float64 { return &f }
