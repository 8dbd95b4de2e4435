package mockmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentharness/harness/internal/regfile"
	"github.com/pelletier/go-toml/v2"
)

// Usage is the token accounting the server reports for one model call. The numbers are fixed per
// turn so tests can check a CLI's (and the harness's) token totals exactly: a run that makes N
// model calls reports the sum of the N turns' Usage.
type Usage struct {
	InputTokens     int `toml:"input"`
	OutputTokens    int `toml:"output"`
	CachedTokens    int `toml:"cached"`
	ReasoningTokens int `toml:"reasoning"`
}

// check refuses counts no API reports: negative ones, more cached than
// input (cached is part of input) or more reasoning than output (part of
// output): the agents' own arithmetic made other numbers of them.
func (u Usage) check() error {
	switch {
	case u.InputTokens < 0 || u.OutputTokens < 0 || u.CachedTokens < 0 || u.ReasoningTokens < 0:
		return errors.New("a negative count")
	case u.CachedTokens > u.InputTokens:
		return fmt.Errorf("cached %d over input %d (cached is part of input)", u.CachedTokens, u.InputTokens)
	case u.ReasoningTokens > u.OutputTokens:
		return fmt.Errorf("reasoning %d over output %d (reasoning is part of output)", u.ReasoningTokens, u.OutputTokens)
	}
	return nil
}

// Total is input plus output, the figure APIs report as total tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Tool call kinds. A ToolCall whose Kind is none of these names a tool of the CLI directly.
const (
	// KindShell runs Command with the CLI's own shell tool (Bash, bash, exec_command, ...).
	KindShell = "shell"
	// KindWrite writes Content to Path with the CLI's file-writing tool (Write, write,
	// write_file, apply_patch).
	KindWrite = "write"
)

// ToolCall is one tool call the scripted model makes. The concrete tool and its argument names
// are chosen per request from the tool list the CLI sent, so one scenario drives every CLI.
type ToolCall struct {
	// Kind is KindShell, KindWrite, or the exact name of a tool in the request.
	Kind string `toml:"kind"`
	// Command is the shell command for KindShell.
	Command string `toml:"command"`
	// Path and Content are the file for KindWrite. A relative Path is relative to the CLI's
	// working directory.
	Path    string `toml:"path"`
	Content string `toml:"content"`
	// Args are the literal arguments when Kind names a tool; for KindShell and KindWrite they
	// are merged over the generated ones.
	Args map[string]any `toml:"args"`
}

// Turn is what the model answers on one conversation turn: text chunks, then tool calls; or an
// HTTP error; or chunks followed by a stall.
type Turn struct {
	// Text is streamed as one delta per element.
	Text []string `toml:"text"`
	// ToolCalls follow the text in the same response.
	ToolCalls []ToolCall `toml:"tool"`
	// Delay is slept before each text chunk and tool call (DelayMS in TOML).
	Delay   time.Duration `toml:"-"`
	DelayMS int           `toml:"delay_ms"`
	// Status, when non-zero, answers with that HTTP status and the API's error body instead.
	Status int `toml:"status"`
	// Overloaded answers with the API's "overloaded" error: 529 for Anthropic, 503 for the
	// others (Status, if set, wins).
	Overloaded bool `toml:"overloaded"`
	// RetryAfter, with an error, is sent as retry-after-ms / retry-after headers, which the
	// CLIs' SDKs honour; it keeps their retry loops short.
	RetryAfter   time.Duration `toml:"-"`
	RetryAfterMS int           `toml:"retry_after_ms"`
	// Hang streams Text, then keeps the response open without sending anything until the
	// client goes away or the server is closed.
	Hang bool `toml:"hang"`
	// Usage is reported for this turn's model call.
	Usage Usage `toml:"usage"`
	// After starts a new part of the script, for a conversation that goes on over several
	// prompts (a live session): this turn and the ones after it answer a conversation that
	// holds the text After (the later prompt), counting only the tool results since. Requires
	// is text the conversation must still hold (the earlier prompt: the agent kept its
	// context); a conversation without it is answered with text saying so, and no tool call.
	After    string `toml:"after"`
	Requires string `toml:"requires"`
}

// IsError reports whether the turn answers with an HTTP error.
func (t Turn) IsError() bool { return t.Status != 0 || t.Overloaded }

// Scenario is a script of turns. The turn a request gets is derived from the conversation it
// carries (how many tool results it holds), so one scenario can serve many runs in a row.
// Requests without tools (title generation and similar side calls) get SideText instead and do
// not count as a turn.
type Scenario struct {
	Name  string `toml:"name"`
	Turns []Turn `toml:"turn"`
	// SideText answers requests that carry no tools; empty means DefaultSideText.
	SideText string `toml:"side_text"`
	// SideUsage is reported for side calls.
	SideUsage Usage `toml:"side_usage"`
}

// Texts the built-in scenarios send, exported so tests can compare CLI output with them.
const (
	TextAnswer      = "Hello from the mock model. This is a plain streamed answer."
	ToolAnswer      = "DONE: file written"
	EditAnswer      = "DONE: file edited"
	MultiAnswer     = "DONE: all steps finished"
	DefaultSideText = "Mock title"
	// ToolCommand is what the tool scenario runs; it writes out.txt in the CLI's cwd.
	ToolCommand = "echo hello-from-tool > out.txt && cat out.txt"
	// EditContent is what the edit scenario writes to EditPath.
	EditContent = "hello-from-edit\n"
	EditPath    = "out.txt"
)

// The converse scenario: two prompts in one conversation, each answered with one file written
// and a closing text. The second prompt must carry ConverseMark2, and the conversation it comes
// in must still hold ConverseMark1 (the first prompt's).
const (
	ConversePrompt1 = "Write first.txt (context-mark-alpha7)."
	ConversePrompt2 = "Now write second.txt (turn-mark-beta9)."
	ConverseMark1   = "context-mark-alpha7"
	ConverseMark2   = "turn-mark-beta9"
	ConverseFirst   = "first.txt"
	ConverseSecond  = "second.txt"
	// ContextMissing starts the text answering a conversation that lost its context.
	ContextMissing = "mockmodel: the conversation lacks"
)

// DefaultUsage is the usage of every built-in model call, as in the shared captures: a run with
// one tool round trip reports 240 input and 50 output tokens.
var DefaultUsage = Usage{InputTokens: 120, OutputTokens: 25}

// SideUsageDefault is what side calls (no tools) report.
var SideUsageDefault = Usage{InputTokens: 20, OutputTokens: 3}

func chunked(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

var builtins = map[string]func() *Scenario{
	"text": func() *Scenario {
		return &Scenario{Turns: []Turn{{Text: []string{"Hello", " from", " the", " mock", " model.", " This is", " a plain", " streamed answer."}}}}
	},
	"tool": func() *Scenario {
		return &Scenario{Turns: []Turn{
			{Text: []string{"I'll r", "un the", " comma", "nd."}, ToolCalls: []ToolCall{{Kind: KindShell, Command: ToolCommand}}},
			{Text: []string{"DONE:", " file", " writ", "ten"}},
		}}
	},
	"edit": func() *Scenario {
		return &Scenario{Turns: []Turn{
			{Text: []string{"I'll write", " the file."}, ToolCalls: []ToolCall{{Kind: KindWrite, Path: EditPath, Content: EditContent}}},
			{Text: []string{"DONE:", " file", " edited"}},
		}}
	},
	"multi": func() *Scenario {
		return &Scenario{Turns: []Turn{
			{Text: []string{"Two steps", " at once."}, ToolCalls: []ToolCall{
				{Kind: KindShell, Command: "echo first > first.txt && cat first.txt"},
				{Kind: KindShell, Command: "echo second > second.txt && cat second.txt"},
			}},
			{Text: []string{"Now", " combine."}, ToolCalls: []ToolCall{{Kind: KindShell, Command: "cat first.txt second.txt > out.txt && cat out.txt"}}},
			{Text: []string{"DONE:", " all steps", " finished"}},
		}}
	},
	"converse": func() *Scenario {
		return &Scenario{Turns: []Turn{
			{Text: []string{"I'll write", " the first file."}, ToolCalls: []ToolCall{{Kind: KindWrite, Path: ConverseFirst, Content: "first\n"}}},
			{Text: []string{"DONE:", " first file"}},
			{After: ConverseMark2, Requires: ConverseMark1,
				Text: []string{"I'll write", " the second file."}, ToolCalls: []ToolCall{{Kind: KindWrite, Path: ConverseSecond, Content: "second\n"}}},
			{Text: []string{"DONE:", " second file"}},
		}}
	},
	"hang": func() *Scenario {
		return &Scenario{Turns: []Turn{{Text: []string{"Thinking", " about", " it"}, Hang: true}}}
	},
	"error": func() *Scenario {
		return &Scenario{Turns: []Turn{{Status: 500, RetryAfter: 50 * time.Millisecond}}}
	},
	"overloaded": func() *Scenario {
		return &Scenario{Turns: []Turn{{Overloaded: true, RetryAfter: 50 * time.Millisecond}}}
	},
	"slow": func() *Scenario {
		return &Scenario{Turns: []Turn{{Text: chunked("This answer drips out slowly, one small piece at a time.", 6), Delay: 300 * time.Millisecond}}}
	},
}

// BuiltinNames lists the built-in scenarios in a stable order.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ErrUnknownScenario is returned by Builtin for a name it does not know.
var ErrUnknownScenario = errors.New("mockmodel: unknown scenario")

// Builtin returns a fresh copy of a built-in scenario (text, tool, edit, multi, converse, hang, error,
// overloaded, slow); the caller may change it, e.g. slow's Turns[0].Delay.
func Builtin(name string) (*Scenario, error) {
	mk, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownScenario, name, strings.Join(BuiltinNames(), ", "))
	}
	sc := mk()
	sc.Name = name
	for i := range sc.Turns {
		if !sc.Turns[i].IsError() {
			sc.Turns[i].Usage = DefaultUsage
		}
	}
	sc.SideUsage = SideUsageDefault
	return sc, nil
}

// LoadScenario reads a custom scenario from a TOML file:
//
//	name = "custom"
//	[[turn]]
//	text = ["Hello", " world"]
//	delay_ms = 50
//	usage = { input = 100, output = 10 }
//	[[turn.tool]]
//	kind = "shell"            # or "write" (path, content), or a tool name with args = {...}
//	command = "echo hi > out.txt"
//	[[turn]]
//	status = 500              # or overloaded = true; hang = true stalls after the text
//
// Unknown keys are an error, so a typo does not silently change the script.
func LoadScenario(path string) (*Scenario, error) {
	// A regular file only: a FIFO's open waited for a writer, forever.
	data, err := regfile.ReadFile(path, maxScenarioFile)
	if err != nil {
		return nil, fmt.Errorf("mockmodel: load scenario: %w", err)
	}
	sc, err := ParseScenario(data)
	if err != nil {
		// The file named: "parse scenario: toml: ..." said nothing of which.
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// maxScenarioFile caps a scenario file (a scenario of many long turns is
// a few MB).
const maxScenarioFile = 64 << 20

// maxDelayMS bounds delay_ms and retry_after_ms: a day (more overflowed
// a time.Duration into a negative one, which slept nothing).
const maxDelayMS = 24 * 60 * 60 * 1000

// ParseScenario is LoadScenario on TOML text. What the scenario asks must
// be served as it asks, or the scenario is refused: unknown keys, numbers
// out of range, tool arguments that are not JSON (nan, inf).
func ParseScenario(data []byte) (*Scenario, error) {
	var sc Scenario
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) {
			// Its Error() names no key.
			var keys []string
			for _, e := range sm.Errors {
				row, _ := e.Position()
				keys = append(keys, fmt.Sprintf("%s (line %d)", strings.Join(e.Key(), "."), row))
			}
			return nil, fmt.Errorf("mockmodel: parse scenario: unknown key %s", strings.Join(keys, ", "))
		}
		return nil, fmt.Errorf("mockmodel: parse scenario: %w", err)
	}
	if len(sc.Turns) == 0 {
		return nil, errors.New("mockmodel: parse scenario: no [[turn]]")
	}
	if err := sc.SideUsage.check(); err != nil {
		return nil, fmt.Errorf("mockmodel: parse scenario: side_usage: %w", err)
	}
	for i := range sc.Turns {
		t := &sc.Turns[i]
		if t.DelayMS < 0 || t.RetryAfterMS < 0 {
			return nil, fmt.Errorf("mockmodel: parse scenario: turn %d: negative duration", i)
		}
		if t.DelayMS > maxDelayMS || t.RetryAfterMS > maxDelayMS {
			return nil, fmt.Errorf("mockmodel: parse scenario: turn %d: a delay over a day (%d ms)", i, maxDelayMS)
		}
		if err := t.Usage.check(); err != nil {
			return nil, fmt.Errorf("mockmodel: parse scenario: turn %d: usage: %w", i, err)
		}
		t.Delay = time.Duration(t.DelayMS) * time.Millisecond
		t.RetryAfter = time.Duration(t.RetryAfterMS) * time.Millisecond
		if t.Status != 0 && (t.Status < 400 || t.Status > 599) {
			return nil, fmt.Errorf("mockmodel: parse scenario: turn %d: status %d is not an HTTP error", i, t.Status)
		}
		for j, c := range t.ToolCalls {
			switch {
			case c.Kind == "":
				return nil, fmt.Errorf("mockmodel: parse scenario: turn %d tool %d: no kind", i, j)
			case c.Kind == KindShell && c.Command == "":
				return nil, fmt.Errorf("mockmodel: parse scenario: turn %d tool %d: shell without command", i, j)
			case c.Kind == KindWrite && c.Path == "":
				return nil, fmt.Errorf("mockmodel: parse scenario: turn %d tool %d: write without path", i, j)
			}
			if _, err := json.Marshal(c.Args); err != nil {
				return nil, fmt.Errorf("mockmodel: parse scenario: turn %d tool %d: args are not JSON (nan or inf?): %v", i, j, err)
			}
		}
	}
	return &sc, nil
}

// turnFor picks the turn for a conversation holding results of `results` tool calls: turn k is
// the one after the first k turns' tool calls have all been answered. A conversation past the
// script gets the last turn if it is a plain answer, or nil (the server then sends a short
// answer) so a CLI that makes more calls than scripted still ends.
func (sc *Scenario) turnFor(results int, raw []byte) (int, *Turn) {
	cum, k := 0, 0
	// The last part whose opening text the conversation holds.
	for i, t := range sc.Turns {
		if t.After != "" && bytes.Contains(raw, []byte(t.After)) {
			k, cum = i, 0
			for _, u := range sc.Turns[:i] {
				cum += len(u.ToolCalls)
			}
		}
	}
	results = max(results, cum)
	for k < len(sc.Turns) {
		n := len(sc.Turns[k].ToolCalls)
		if n == 0 || cum+n > results {
			break
		}
		cum += n
		k++
	}
	if k >= len(sc.Turns) {
		return k, nil
	}
	return k, &sc.Turns[k]
}
