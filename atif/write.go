package atif

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// docWriter writes a trajectory file a step at a time, byte for byte as
// Marshal writes the trajectory whole: the envelope's fields are
// encoding/json's own (the envelope is encoded with an empty steps array,
// which the steps take the place of), each step is encoded at its depth.
// Only the step in hand is held. The first error sticks.
type docWriter struct {
	w       *bufio.Writer
	buf     bytes.Buffer  // an envelope encoded
	enc     *json.Encoder // into buf
	out     heldNewline
	stepEnc *json.Encoder // a step, into out: not held whole a second time
	err     error
	depth   string // of the trajectory being written: "" the root
	steps   int    // steps written in its steps array
	subs    int    // sub-agent trajectories written
}

func newDocWriter(w io.Writer) *docWriter {
	d := &docWriter{w: bufio.NewWriterSize(w, 64<<10)}
	d.enc = json.NewEncoder(&d.buf)
	d.enc.SetEscapeHTML(false)
	d.out.d = d
	d.stepEnc = json.NewEncoder(&d.out)
	d.stepEnc.SetEscapeHTML(false)
	return d
}

// encode returns v as Marshal writes it at depth (its first line not
// indented), valid until the next call.
func (d *docWriter) encode(v any, depth string) []byte {
	d.buf.Reset()
	d.enc.SetIndent(depth, "  ")
	if err := d.enc.Encode(v); err != nil && d.err == nil {
		d.err = err
	}
	return bytes.TrimSuffix(d.buf.Bytes(), []byte("\n"))
}

func (d *docWriter) write(b ...[]byte) {
	for _, p := range b {
		if d.err == nil {
			_, d.err = d.w.Write(p)
		}
	}
}

// envelope returns t encoded at depth without its steps and sub-agent
// trajectories, cut where its steps array goes: head ends with `"steps": `.
func (d *docWriter) envelope(t *Trajectory, depth string) (head, tail []byte) {
	e := *t
	e.Steps, e.SubagentTrajectories = []Step{}, nil
	b := d.encode(&e, depth)
	// The one raw newline followed by this: no JSON string holds one.
	mark := []byte("\n" + depth + `  "steps": []`)
	i := bytes.Index(b, mark)
	if i < 0 {
		if d.err == nil {
			d.err = errors.New("atif: the trajectory's envelope has no steps")
		}
		return nil, nil
	}
	i += len(mark) - len("[]")
	return bytes.Clone(b[:i]), bytes.Clone(b[i+len("[]"):])
}

// begin writes t's envelope up to its steps, at depth; its steps follow
// (step), then end.
func (d *docWriter) begin(t *Trajectory, depth string) {
	head, _ := d.envelope(t, depth)
	d.write(head, []byte("["))
	d.depth, d.steps = depth, 0
}

// step writes the next step of the trajectory begun.
func (d *docWriter) step(s Step) {
	in := d.depth + "    " // the steps array's elements, two levels in
	sep := ",\n"
	if d.steps == 0 {
		sep = "\n"
	}
	d.steps++
	d.write([]byte(sep + in))
	d.stepEnc.SetIndent(in, "  ")
	if err := d.stepEnc.Encode(&s); err != nil && d.err == nil {
		d.err = err
	}
	d.out.held = false // Encode's final newline
}

// heldNewline writes to its docWriter all but a newline that ends a
// write, which it writes before the next: the newline Encode ends a value
// with is left out.
type heldNewline struct {
	d    *docWriter
	held bool
}

func (h *heldNewline) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, h.d.err
	}
	if h.held {
		h.d.write([]byte("\n"))
	}
	h.held = p[len(p)-1] == '\n'
	if h.held {
		h.d.write(p[:len(p)-1])
	} else {
		h.d.write(p)
	}
	return len(p), h.d.err
}

// endSteps closes the steps array of the trajectory begun.
func (d *docWriter) endSteps() {
	if d.steps > 0 {
		d.write([]byte("\n" + d.depth + "  "))
	}
	d.write([]byte("]"))
}

// endRoot writes what follows the root's steps: t's fields after them,
// then, when there are sub-agents, the opening of its
// subagent_trajectories array (sub, then end).
func (d *docWriter) endRoot(t *Trajectory, subs bool) {
	d.endSteps()
	_, tail := d.envelope(t, "")
	if !subs {
		d.write(tail)
		return
	}
	// subagent_trajectories is the last field: the tail ends with "\n}".
	d.write(bytes.TrimSuffix(tail, []byte("\n}")), []byte(",\n  \"subagent_trajectories\": ["))
}

// sub begins the next sub-agent trajectory, t without its steps.
func (d *docWriter) sub(t *Trajectory) {
	sep := ",\n    "
	if d.subs == 0 {
		sep = "\n    "
	}
	d.subs++
	d.write([]byte(sep))
	d.begin(t, "    ")
}

// endSub ends the sub-agent trajectory t, begun with sub.
func (d *docWriter) endSub(t *Trajectory) {
	d.endSteps()
	_, tail := d.envelope(t, "    ")
	d.write(tail)
}

// end ends the file and flushes it.
func (d *docWriter) end() error {
	if d.subs > 0 {
		d.write([]byte("\n  ]\n}"))
	}
	d.write([]byte("\n"))
	if d.err == nil {
		d.err = d.w.Flush()
	}
	return d.err
}
