package atif

import (
	"errors"
	"fmt"
	"io"
	"os"
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
//
// Load holds the whole run: Export writes the same trajectory holding a
// few steps at a time.
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
	t := FromEvents(evs, metaOf(m, prompt))
	if cut {
		markCut(t)
	}
	return t, nil
}

// metaOf is what the meta of a logged run tells FromEvents.
func metaOf(m logger.Meta, prompt string) Meta {
	if prompt == "" && utf8.RuneCountInString(m.PromptPreview) < logger.PromptPreviewLen {
		prompt = m.PromptPreview
	}
	return Meta{Run: m.Run, Agent: m.Agent, AgentVersion: m.AgentVersion, Model: m.Model,
		SessionID: m.SessionID, Prompt: prompt}
}

func markCut(t *Trajectory) {
	t.Extra["log_cut"] = true
	t.Notes = strings.TrimSpace(t.Notes + " " + noteCut)
}

const noteCut = "The session log ends in a line cut short (its harness was stopped, or is still writing it): " +
	"the trajectory is of the lines before it."

// Export writes the trajectory of run to w as Marshal writes what Load
// returns, byte for byte, with Load's errors; an error after the first
// byte (a failed write) leaves w with a part.
//
// It holds a few steps at a time, never the run: the session log is read
// in passes, each decoding one line at a time. The first learns what the
// trajectory says before its steps and what a step cannot know from the
// lines before it (plan), and keeps the results of calls that end late
// (far after they start: a background command, a call the stream ends
// at the run's result; at most maxLate of them, maxLateBytes of output);
// the next writes the main agent's steps, each as soon as no later line
// can change it (a step waits for the results of its calls but those
// kept), then what the whole run gives (final metrics, counts);
// a run with sub-agents takes one pass to find the results that refer to
// them and one pass for each run of sub-agents written in turn, as a
// sub-agent's steps come after the main agent's and after those of the
// sub-agents before it. Only the bytes the first pass read are read
// again: a harness still writing the log appends to it.
func Export(dir, run, prompt string, w io.Writer) error {
	m, err := logger.Load(dir, run)
	if err != nil {
		return err
	}
	return export(dir, m, prompt, w)
}

// errStop ends a pass that has read what it needs.
var errStop = errors.New("atif: pass done")

func export(dir string, lm logger.Meta, prompt string, w io.Writer) error {
	f, err := logger.OpenFile(dir, lm.Run, logger.ExtEvents) // not a FIFO: it would wait for a writer
	if err != nil {
		return fmt.Errorf("atif: %w", err)
	}
	defer f.Close()
	name := lm.Run + logger.ExtEvents
	p := newPlan()
	p.collect = true
	read := &counter{r: f}
	cut, err := event.ScanLog(read, func(ev event.Event) error {
		p.pos = read.n
		p.event(ev)
		return nil
	})
	if err != nil {
		return fmt.Errorf("atif: %s: %w", name, err)
	}
	// pass reads the log again as the first pass read it; fn returns
	// errStop once it has what it needs, or once the output failed.
	pass := func(fn func(event.Event) error) error {
		_, err := event.ScanLog(io.NewSectionReader(f, 0, read.n), fn)
		if errors.Is(err, errStop) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("atif: %s: %w", name, err)
		}
		return nil
	}
	if p.surveyed() {
		if err := pass(func(ev event.Event) error { p.refEvent(ev); return nil }); err != nil {
			return err
		}
		if p.at != p.events {
			return changed(name)
		}
	}
	p.done()

	m := metaOf(lm, prompt)
	t := p.trajectory(m)
	d := newDocWriter(w)
	d.begin(t, "")
	b := newBuilder(m, p, d.step, nil)
	err = pass(func(ev event.Event) error {
		b.event(ev)
		if d.err != nil {
			return errStop
		}
		return nil
	})
	if err != nil {
		return err
	}
	if d.err != nil {
		return d.err
	}
	if b.at != p.events {
		return changed(name)
	}
	b.finish()
	b.close(t)
	if cut {
		markCut(t)
	}
	d.endRoot(t, len(p.subs) > 0)
	for k := 0; k < len(p.subs) && d.err == nil; {
		if k, err = exportSubs(d, m, p, t, k, pass); err != nil {
			return err
		}
	}
	return d.end() // d.err, if any
}

// exportSubs writes sub-agent trajectories from the k-th, in one pass:
// each while the log is read, as long as the next starts after the one
// before ends (a step of one that started before would be lost: the
// pass did not build it). It returns the index of the next to write.
func exportSubs(d *docWriter, m Meta, p *plan, t *Trajectory, k int, pass func(func(event.Event) error) error) (int, error) {
	live := k
	sub := p.subTrajectory(m, t, p.subs[live].id)
	d.sub(&sub)
	b := newBuilder(m, p, nil, func(id string) func(Step) {
		if id == p.subs[live].id {
			return d.step
		}
		return nil
	})
	stopped := false
	err := pass(func(ev event.Event) error {
		b.event(ev)
		if d.err != nil {
			stopped = true
			return errStop
		}
		if i := b.at - 1; i == p.subs[live].last {
			// Nothing after its last event changes it.
			b.flush(b.subs[p.subs[live].id], true)
			d.endSub(&sub)
			live++
			if live == len(p.subs) || p.subs[live].first <= i {
				stopped = true
				return errStop
			}
			sub = p.subTrajectory(m, t, p.subs[live].id)
			d.sub(&sub)
		}
		return nil
	})
	if err == nil && !stopped {
		// The last event of the one begun not read again.
		err = changed(m.Run + logger.ExtEvents)
	}
	return live, err
}

func changed(name string) error {
	return fmt.Errorf("atif: %s changed while it was read", name)
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// WriteLog writes the trajectory of run beside its session log, as
// dir/<run>.trajectory.json (logger.ExtTrajectory, 0600 like the log),
// replacing it whole (a reader sees the old file or the new), and
// returns its path. It holds a few steps at a time (Export).
func WriteLog(dir, run, prompt string) (string, error) {
	m, err := logger.Load(dir, run)
	if err != nil {
		return "", err
	}
	path := logger.Path(dir, m.Run, logger.ExtTrajectory)
	var werr error // export's errors say what they are
	err = regfile.Replace(path, 0o600, func(f *os.File) error {
		werr = export(dir, m, prompt, f)
		return werr
	})
	if werr != nil {
		return "", werr
	}
	if err != nil {
		return "", fmt.Errorf("atif: %w", err)
	}
	return path, nil
}
