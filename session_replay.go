package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// SessionRecord is what a live session's recorded stream knows that the
// agent's native lines do not: the prompts the harness wrote to the agent,
// how each turn ended where the harness decided it (an interrupt, a turn
// out of time, a turn the session's end closed), whether the caller
// answered permission requests, and how the session ended. With it, Parse
// rebuilds the session's turns from its native lines
// (ParseOptions.Session).
type SessionRecord struct {
	Turns  []RecordedTurn
	Ask    bool   // the session asked its caller (permission_request events)
	Status string // the session's result status
	Cwd    string // the agent's directory (session_start), which paths and diffs are relative to
}

// RecordedTurn is one turn of a SessionRecord: its turn_start's prompt
// and its turn_end's status and synthetic flag.
type RecordedTurn struct {
	Prompt    string
	Status    string
	Synthetic bool
}

// ReadSessionRecord reads the SessionRecord of a recorded stream (a
// session log's <run>.ndjson); nil for the stream of a run, which has no
// turns. A stream cut or damaged partway (the harness died writing it)
// gives the record of the events before the damage: the turns after it
// are not rebuilt. The error is the reader's only.
func ReadSessionRecord(r io.Reader) (*SessionRecord, error) {
	rec := &SessionRecord{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4*event.MaxLineBytes)
	for sc.Scan() {
		ev, err := event.Decode(sc.Bytes())
		if err != nil {
			break // the damage: what follows is not the session's record
		}
		rec.add(ev.Body)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the recorded stream: %w", err)
	}
	if len(rec.Turns) == 0 {
		return nil, nil
	}
	return rec, nil
}

// add takes what the record keeps of one recorded event.
func (rec *SessionRecord) add(b event.Body) {
	switch b := b.(type) {
	case *event.SessionStart:
		rec.Cwd = b.Cwd
	case *event.TurnStart:
		rec.Turns = append(rec.Turns, RecordedTurn{Prompt: b.Prompt})
	case *event.TurnEnd:
		if n := len(rec.Turns); n > 0 {
			rec.Turns[n-1].Status, rec.Turns[n-1].Synthetic = b.Status, b.Synthetic
		}
	case *event.PermissionRequest:
		rec.Ask = true
	case *event.Result:
		rec.Status = b.Status
	}
}

// errOnePrompt: a session record given for a protocol whose parser holds
// one prompt.
var errOnePrompt = errors.New("the protocol holds one prompt a session: its log has no turns")

// replayer plays a live session again over its native lines: the
// protocol's own Conversation, begun on a stdin that goes nowhere (so its
// request ids are the live run's), is sent each recorded prompt when the
// turn before it ended, and asked to cancel a turn the recorded stream
// shows interrupted or out of time; a turn the harness ended itself
// (timeout, or closed when the session ended in it) ends so again.
type replayer struct {
	conv     adapters.Conversation
	rec      *SessionRecord
	sent     int  // prompts sent
	open     bool // a turn is in progress
	canceled bool // its cancel was asked
}

// newReplayer begins conv for a replay of rec; the first prompt's turn
// comes with the first line.
func newReplayer(p adapters.Parser, rec *SessionRecord) (*replayer, error) {
	conv, ok := p.(adapters.Conversation)
	if !ok {
		return nil, errOnePrompt
	}
	if b, ok := conv.(adapters.SetupBounded); ok {
		// A capture is read at once: no setup step can be late.
		b.BoundSetup(100*365*24*time.Hour, nil)
	}
	if r, ok := conv.(adapters.Replayed); ok {
		r.Replay()
	}
	conv.Converse(rec.Ask)
	if err := conv.Begin(io.Discard, adapters.Task{Cwd: rec.Cwd}); err != nil {
		return nil, err
	}
	r := &replayer{conv: conv, rec: rec}
	return r, nil
}

// Parse implements adapters.Parser.
func (r *replayer) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	n := len(dst)
	if r.sent == 0 {
		dst = r.prompt(dst)
	}
	if r.open && !r.canceled && r.stopped() {
		if c, ok := r.conv.(adapters.Canceler); ok {
			r.canceled = c.Cancel()
		}
	}
	dst, known := r.conv.Parse(dst, line)
	return r.turns(dst, n), known
}

// Flush implements adapters.Parser: a turn the harness closed when the
// session ended in it is closed as it was.
func (r *replayer) Flush(dst []event.Body) []event.Body {
	n := len(dst)
	dst = r.turns(r.conv.Flush(dst), n)
	if r.open && r.sent > 0 {
		if t := r.rec.Turns[r.sent-1]; t.Synthetic {
			dst = append(dst, &event.TurnEnd{Status: t.Status, Synthetic: true})
		}
	}
	return dst
}

// stopped reports whether the harness stopped the turn in progress.
func (r *replayer) stopped() bool {
	s := r.rec.Turns[r.sent-1].Status
	return s == event.ResultCancelled || s == event.ResultTimeout
}

// turns follows the turns in dst[n:]: a turn out of time ends so (the
// agent ended it cancelled), and the next prompt goes once a turn ended.
func (r *replayer) turns(dst []event.Body, n int) []event.Body {
	for {
		ended := false
		for i := n; i < len(dst); i++ {
			switch v := dst[i].(type) {
			case *event.TurnStart:
				r.open, r.canceled = true, false
			case *event.TurnEnd:
				if r.sent > 0 && r.rec.Turns[r.sent-1].Status == event.ResultTimeout {
					v.Status = event.ResultTimeout
				}
				r.open, ended = false, true
			}
		}
		if !ended || r.open {
			return dst
		}
		n = len(dst)
		if dst = r.prompt(dst); len(dst) == n {
			return dst
		}
	}
}

// prompt sends the next recorded prompt, if any.
func (r *replayer) prompt(dst []event.Body) []event.Body {
	if r.sent >= len(r.rec.Turns) {
		return dst
	}
	r.sent++
	bodies, err := r.conv.Prompt(r.rec.Turns[r.sent-1].Prompt)
	if err != nil {
		return dst
	}
	return append(dst, bodies...)
}
