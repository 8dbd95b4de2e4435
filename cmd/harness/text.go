package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/ansi"
	"github.com/agentharness/harness/internal/plural"
)

// textRenderer writes a live transcript for a person: assistant text as it
// streams, one line per tool call, warnings and errors, a closing summary.
// Every string that comes from the agent goes through ansi.TermSafe (paint
// does it for what it colors), so agent output cannot drive the terminal.
type textRenderer struct {
	w       io.Writer
	color   bool
	midLine bool // the last write did not end a line
	// streamed is the text of the deltas printed that no complete message
	// has accounted for yet: a message that starts it was printed already
	// (an agent may stream several parts before their messages come).
	streamed  strings.Builder
	reasoning bool // reasoning deltas were printed since the last complete reasoning
}

const (
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

func (t *textRenderer) paint(code, s string) string {
	s = ansi.TermSafe(s)
	if !t.color {
		return s
	}
	return code + s + ansiReset
}

func (t *textRenderer) endLine() {
	if t.midLine {
		fmt.Fprintln(t.w)
		t.midLine = false
	}
}

func (t *textRenderer) line(s string) {
	t.endLine()
	fmt.Fprintln(t.w, s)
}

func (t *textRenderer) write(s string) {
	if s == "" {
		return
	}
	fmt.Fprint(t.w, s)
	t.midLine = !strings.HasSuffix(s, "\n")
}

// Render writes what ev means for a reader.
func (t *textRenderer) Render(ev event.Event) {
	switch b := ev.Body.(type) {
	case *event.SessionStart:
		s := "▶ " + b.Agent
		if b.Model != "" {
			s += " (" + b.Model + ")"
		}
		if b.Cwd != "" {
			s += " in " + b.Cwd
		}
		t.line(t.paint(ansiDim, s))
	case *event.TextDelta:
		if t.reasoning {
			t.endLine()
			t.reasoning = false
		}
		t.write(ansi.TermSafe(b.Text))
		if t.streamed.Len() < event.MaxTextBytes {
			t.streamed.WriteString(b.Text)
		}
	case *event.ReasoningDelta:
		if !t.reasoning || !t.midLine {
			// Without color, only this tells it from the answer, on
			// every line it starts.
			t.endLine()
			t.write(t.paint(ansiDim, "thinking: "))
		}
		t.write(t.paint(ansiDim, b.Text))
		t.reasoning = true
	case *event.Reasoning:
		if !t.reasoning {
			t.line(t.paint(ansiDim, "thinking: "+oneLineCut(b.Text, 200)))
		}
		t.endLine()
		t.reasoning = false
	case *event.Message:
		if b.Role != event.RoleAssistant {
			return
		}
		switch pending := t.streamed.String(); {
		case pending == "":
			t.write(ansi.TermSafe(b.Text))
		case strings.HasPrefix(pending, b.Text) && b.Text != "":
			// Printed as it streamed; what follows it belongs to the
			// messages still to come.
			t.streamed.Reset()
			t.streamed.WriteString(pending[len(b.Text):])
			if t.streamed.Len() > 0 {
				return
			}
		default: // the deltas were this message, told otherwise (cut, or a final form)
			t.streamed.Reset()
		}
		t.endLine()
	case *event.ToolStart:
		t.endLine()
	case *event.ToolEnd:
		t.line(t.toolLine(b))
	case *event.Warning:
		t.line(t.paint(ansiYellow, "! "+b.Code+": "+b.Message))
	case *event.Error:
		s := "✗ " + b.Code + ": " + b.Message
		if b.Class != "" {
			s += " [" + b.Class + "]"
		}
		t.line(t.paint(ansiRed, s))
		if b.Hint != "" {
			t.line(t.paint(ansiDim, "  hint: "+b.Hint))
		}
	case *event.Result:
		t.line(t.summary(b))
	}
}

func (t *textRenderer) toolLine(b *event.ToolEnd) string {
	mark, code := "✓", ansiGreen
	switch b.Status {
	case event.StatusOK:
	case event.StatusDenied:
		mark, code = "⊘", ansiYellow
	default:
		mark, code = "✗", ansiRed
	}
	s := fmt.Sprintf("  %s %s [%s] %s", t.paint(code, mark), t.paint(ansiCyan, b.Name), ansi.TermSafe(string(b.Kind)), ansi.TermSafe(string(b.Status)))
	if b.ExitCode != nil {
		s += fmt.Sprintf(" (exit %d)", *b.ExitCode)
	}
	s += " " + t.paint(ansiDim, formatDuration(time.Duration(b.DurationMS)*time.Millisecond))
	if len(b.Paths) > 0 {
		s += " " + ansi.TermSafe(strings.Join(b.Paths, ", "))
	}
	if b.Synthetic {
		s += t.paint(ansiDim, " (closed by harness)")
	}
	return s
}

func (t *textRenderer) summary(r *event.Result) string {
	code := ansiGreen
	if r.Status != event.ResultSuccess {
		code = ansiRed
	}
	parts := []string{t.paint(ansiBold+code, r.Status), formatDuration(time.Duration(r.DurationMS) * time.Millisecond)}
	if r.NumTurns > 0 {
		parts = append(parts, plural.Count(int64(r.NumTurns), "turn"))
	}
	if r.Stats.ToolCalls > 0 {
		parts = append(parts, plural.Count(r.Stats.ToolCalls, "tool call"))
	}
	u := r.Usage
	if !u.IsZero() {
		s := fmt.Sprintf("%d in / %d out tokens", u.InputTokens, u.OutputTokens)
		if c := u.CacheReadTokens + u.CacheWriteTokens; c > 0 {
			s += fmt.Sprintf(" (+%d cached)", c)
		}
		parts = append(parts, s)
	}
	if r.CostUSD != nil {
		s := fmt.Sprintf("$%.4f", *r.CostUSD)
		if r.CostEstimated {
			s += " (estimated)"
		}
		parts = append(parts, s)
	}
	if r.ExitCode != nil && *r.ExitCode != 0 {
		parts = append(parts, fmt.Sprintf("exit %d", *r.ExitCode))
	}
	if r.Signal != "" {
		parts = append(parts, ansi.TermSafe(r.Signal))
	}
	return "— " + strings.Join(parts, " · ")
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func oneLineCut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if c, cut := event.Cut(s, n); cut {
		return c + "…"
	}
	return s
}
