package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// ErrPlanMismatch is returned when inputs that must share a plan do not.
var ErrPlanMismatch = errors.New("bench: not the same plan")

// Merge combines the runs of results directories and JSON reports (the
// shards of one plan) into one report, in plan order, with its
// aggregates recomputed (seed: the first input's). A run recorded by
// more than one input is kept once (the first) and listed in Duplicates;
// a run of the plan no input holds is listed in Missing (with its task,
// agent, model and repeat when a results directory names them); a run a
// report holds as skipped, cancelled or never started counts as missing,
// as it would in a results directory. Inputs
// of different plans give ErrPlanMismatch; an input that is not a
// results directory or a report, or holds no run, is an error naming it.
func Merge(inputs []string) (*Report, error) {
	if len(inputs) == 0 {
		return nil, errors.New("bench: merge: nothing to merge: give results directories or JSON reports")
	}
	m := &merger{seen: map[int]bool{}}
	for _, in := range inputs {
		st, err := os.Stat(in)
		if err != nil {
			return nil, fmt.Errorf("bench: merge: %w", err)
		}
		if st.IsDir() {
			err = m.dir(in)
		} else {
			err = m.file(in)
		}
		if err != nil {
			return nil, err
		}
	}
	return m.report(), nil
}

type merger struct {
	planID  string
	from    string // the input that set planID
	planned int
	keys    []RunKey // the plan's runs, when a results directory named them
	seed    uint64
	started time.Time
	ended   time.Time
	runs    []RunReport
	seen    map[int]bool
	dups    []RunKey
}

func (m *merger) plan(id, from string, planned int) error {
	if id == "" {
		return fmt.Errorf("bench: merge: %s: has no plan id (made before shards existed?)", from)
	}
	if m.planID == "" {
		m.planID, m.from, m.planned = id, from, planned
		return nil
	}
	if id != m.planID {
		return fmt.Errorf("%w: %s is plan %s, %s is plan %s", ErrPlanMismatch, m.from, short(m.planID), from, short(id))
	}
	m.planned = max(m.planned, planned)
	return nil
}

func (m *merger) add(rr RunReport) {
	if m.seen[rr.Index] {
		m.dups = append(m.dups, rr.Key())
		return
	}
	m.seen[rr.Index] = true
	m.runs = append(m.runs, rr)
}

func (m *merger) span(start, end time.Time) {
	if !start.IsZero() && (m.started.IsZero() || start.Before(m.started)) {
		m.started = start
	}
	if end.After(m.ended) {
		m.ended = end
	}
}

func (m *merger) dir(dir string) error {
	pf, err := readPlanFile(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("bench: merge: %s: no results here (no plan.json): not a --results directory", dir)
	}
	if err != nil {
		return fmt.Errorf("bench: merge: %w", err)
	}
	if err := m.plan(pf.PlanID, dir, len(pf.Runs)); err != nil {
		return err
	}
	m.keys = pf.Runs
	recs, err := readRecords(dir, pf.PlanID)
	if err != nil {
		return fmt.Errorf("bench: merge: %w", err)
	}
	for _, rec := range recs {
		if st, err := os.Stat(filepath.Join(dir, "runs", fmt.Sprintf("%06d.json", rec.Run.Index))); err == nil {
			end := st.ModTime()
			m.span(end.Add(-time.Duration(rec.Run.WallMS)*time.Millisecond), end)
		}
		m.add(rec.Run)
	}
	return nil
}

func (m *merger) file(path string) error {
	r, err := ReadReport(path)
	if err != nil {
		return fmt.Errorf("bench: merge: %w", err)
	}
	if err := m.plan(r.PlanID, path, r.Planned); err != nil {
		return err
	}
	if m.seed == 0 {
		m.seed = r.Seed
	}
	m.span(r.Started, r.Started.Add(time.Duration(r.WallMS)*time.Millisecond))
	for _, rr := range r.Runs {
		if final(rr) { // as in a results directory: the others are missing
			m.add(rr)
		}
	}
	return nil
}

func (m *merger) report() *Report {
	slices.SortFunc(m.runs, func(a, b RunReport) int { return a.Index - b.Index })
	r := &Report{PlanID: m.planID, Planned: m.planned, Seed: m.seed, Started: m.started,
		Runs: m.runs, Duplicates: m.dups}
	if !m.ended.IsZero() {
		r.WallMS = m.ended.Sub(m.started).Milliseconds()
	}
	if r.Runs == nil {
		r.Runs = []RunReport{}
	}
	for i := range m.planned {
		if m.seen[i] {
			continue
		}
		k := RunKey{Index: i}
		if i < len(m.keys) {
			k = m.keys[i]
		}
		r.Missing = append(r.Missing, k)
	}
	Summarize(r)
	return r
}
