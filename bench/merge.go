package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentharness/harness/internal/regfile"
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
//
// Inputs are not trusted: every input must give the plan the same number
// of runs, at most MaxRuns; each run's index must lie in the plan (and in
// the input's shard), at most once per input, with the key the results
// directories' plan gives it; at most MaxGroups agent × model groups. So
// what a merge holds is bounded by MaxRuns and the size of its inputs,
// whatever they say.
func Merge(inputs []string) (*Report, error) { return MergeSeed(inputs, 0) }

// MergeSeed is Merge with the merged report's seed given (bench's
// --seed); 0 is the first input's, as for Merge.
func MergeSeed(inputs []string, seed uint64) (*Report, error) {
	if len(inputs) == 0 {
		return nil, errors.New("bench: merge: nothing to merge: give results directories or JSON reports")
	}
	m := &merger{seed: seed}
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
	if err := m.check(); err != nil {
		return nil, err
	}
	return m.report(), nil
}

type merger struct {
	planID   string
	from     string // the input that set planID
	planned  int
	cond     conditions // what the plan asks of its runs (engine, mock, permissions, turns)
	keys     []RunKey   // the plan's runs, when a results directory named them
	keysFrom string
	seed     uint64
	started  time.Time
	ended    time.Time
	runs     []RunReport
	seen     []bool   // by index, planned long
	dups     []RunKey // second copies of an index, checked as the first (check)
}

// plan takes the plan of input from: its id, its number of runs, and
// the conditions of its runs (the isolation engine, the scripted model's
// scenario, the permission mode and turn limit: an earlier harness's
// files, which record none of them, are taken as none, no mock, full
// access and no limit, whose plan ids are as they were).
func (m *merger) plan(id, from string, planned int, c conditions) error {
	if id == "" {
		return fmt.Errorf("bench: merge: %s: has no plan id (made before shards existed?)", from)
	}
	if planned < 1 || planned > maxRuns {
		return fmt.Errorf("bench: merge: %s: a plan of %d runs: not a plan bench makes (1 to %d)", from, planned, maxRuns)
	}
	if !c.agentLimitsValid() {
		return fmt.Errorf("bench: merge: %s: permissions %q, max turns %d: not a plan bench makes", from, c.permissions, c.maxTurns)
	}
	if m.planID == "" {
		m.planID, m.from, m.planned, m.cond = id, from, planned, c
		m.seen = make([]bool, planned)
		return nil
	}
	// The plan id hashes each of these: two of them are two plans.
	switch {
	case c.engine != m.cond.engine:
		return fmt.Errorf("%w: %s ran under --isolate %s, %s under --isolate %s: the runs of two engines do not mix",
			ErrPlanMismatch, m.from, m.cond.engine, from, c.engine)
	case c.mock != m.cond.mock:
		return fmt.Errorf("%w: %s ran %s, %s %s: the runs of a scripted model and of another model do not mix",
			ErrPlanMismatch, m.from, mockFlag(m.cond.mock), from, mockFlag(c.mock))
	case c.permissions != m.cond.permissions || c.maxTurns != m.cond.maxTurns:
		return fmt.Errorf("%w: %s ran %s, %s %s: runs that may do different things do not mix",
			ErrPlanMismatch, m.from, agentLimits(m.cond), from, agentLimits(c))
	}
	if id != m.planID {
		return fmt.Errorf("%w: %s is plan %s, %s is plan %s", ErrPlanMismatch, m.from, short(m.planID), from, short(id))
	}
	// The plan id hashes the expanded runs: the same id, the same count.
	if planned != m.planned {
		return fmt.Errorf("bench: merge: %s gives plan %s %d runs, %s gives it %d: one of them was not written by bench", m.from, short(m.planID), m.planned, from, planned)
	}
	return nil
}

// add takes a run of input from, once its index is known to lie in the
// plan (the caller checks). A second copy of an index is listed in dups,
// to be checked as the first is (check).
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
		return err // "bench: FILE: …"
	}
	if err := m.plan(pf.PlanID, dir, len(pf.Runs), pf.conditions()); err != nil {
		return err
	}
	if m.keys != nil && !slices.Equal(m.keys, pf.Runs) {
		return fmt.Errorf("bench: merge: %s and %s name the runs of plan %s differently: one plan.json was not written by bench", m.keysFrom, dir, short(m.planID))
	}
	m.keys, m.keysFrom = pf.Runs, dir
	recs, err := readRecords(dir, pf.PlanID, len(pf.Runs))
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if !final(rec.Run) { // a row an older bench wrote of a cancelled check: run again
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, "runs", rowName(rec.Run.Index))); err == nil {
			end := st.ModTime()
			m.span(end.Add(-time.Duration(rec.Run.WallMS)*time.Millisecond), end)
		}
		m.add(rec.Run)
	}
	return nil
}

func (m *merger) file(path string) error {
	r, err := readMergeReport(path)
	if err != nil {
		return fmt.Errorf("bench: merge: %w", err)
	}
	c := Plan{Isolate: r.Isolate, Mock: r.Mock, Permissions: r.Permissions, MaxTurns: r.MaxTurns}.conditions()
	if err := m.plan(r.PlanID, path, r.Planned, c); err != nil {
		return err
	}
	// Its runs lie in its plan and shard, each once (as compare checks
	// each of its inputs).
	if err := checkRuns("merge", path, r.Planned, r.Shard, r.Shape, r.Runs); err != nil {
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

// check holds what no single input can: the runs, kept or duplicate,
// against the plan a results directory named (else a duplicate against
// the run kept at its index: two inputs cannot both be the plan's), and
// the number of groups.
func (m *merger) check() error {
	kept := make(map[int]RunKey, len(m.runs))
	for _, rr := range m.runs {
		kept[rr.Index] = rr.Key()
	}
	for _, k := range m.dups {
		switch {
		case m.keys != nil && k != m.keys[k.Index]:
			return fmt.Errorf("bench: merge: run #%d is not the run %s's plan has at that index", k.Index+1, m.keysFrom)
		case m.keys == nil && k != kept[k.Index]:
			return fmt.Errorf("bench: merge: run #%d is recorded as two different runs (%s and %s): an input was not written by bench for this plan",
				k.Index+1, kept[k.Index], k)
		}
	}
	groups := map[[2]string]bool{}
	for _, rr := range m.runs {
		if m.keys != nil && rr.Key() != m.keys[rr.Index] {
			return fmt.Errorf("bench: merge: run #%d is not the run %s's plan has at that index", rr.Index+1, m.keysFrom)
		}
		groups[[2]string{rr.Agent, rr.Model}] = true
		if len(groups) > maxGroups {
			return fmt.Errorf("bench: merge: plan %s: more than %d agent × model groups: not a plan bench makes", short(m.planID), maxGroups)
		}
	}
	return nil
}

func (m *merger) report() *Report {
	slices.SortFunc(m.runs, func(a, b RunReport) int { return a.Index - b.Index })
	r := &Report{PlanID: m.planID, Planned: m.planned, Isolate: m.cond.engine, Mock: m.cond.mock,
		Permissions: m.cond.permissions, MaxTurns: m.cond.maxTurns, Seed: m.seed, Started: m.started,
		Runs: m.runs, Duplicates: m.dups}
	if !m.ended.IsZero() {
		r.WallMS = m.ended.Sub(m.started).Milliseconds()
	}
	if r.Runs == nil {
		r.Runs = []RunReport{}
	}
	if n := m.planned - len(m.runs); n > 0 {
		r.Missing = make([]RunKey, 0, n)
	}
	for i, seen := range m.seen {
		if seen {
			continue
		}
		k := RunKey{Index: i}
		if m.keys != nil {
			k = m.keys[i]
		}
		r.Missing = append(r.Missing, k)
	}
	Summarize(r)
	return r
}

// mergeReport is what a merge reads of a JSON report: the aggregates are
// recomputed, so they are skipped, not decoded.
type mergeReport struct {
	PlanID      string
	Planned     int
	Isolate     string
	Mock        string
	Permissions string
	MaxTurns    int
	Shard       *Shard
	Shape       *Shape
	Seed        uint64
	Started     time.Time
	WallMS      int64
	Runs        []RunReport
}

// readMergeReport reads a JSON report as a stream: at most MaxRuns runs
// are decoded (a report is one plan's, or a shard of it; at most planned
// when that comes first, as bench writes it), and the rest
// (groups, comparisons) is skipped token by token, so a report's size is
// the bound of what it costs. It opens only a regular file (regfile): the
// open of a FIFO would wait for a writer, and a device may never end.
func readMergeReport(path string) (*mergeReport, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, pathless(err))
	}
	defer f.Close()
	bad := func(err error) error { return fmt.Errorf("%s: not a bench JSON report: %v", path, err) }
	dec := json.NewDecoder(bufio.NewReader(f))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad(errors.New("not a JSON object"))
	}
	var r mergeReport
	// The report's members merge reads besides runs; others are skipped.
	fields := map[json.Token]any{"plan_id": &r.PlanID, "planned": &r.Planned, "isolate": &r.Isolate, "mock": &r.Mock,
		"permissions": &r.Permissions, "max_turns": &r.MaxTurns, "shard": &r.Shard,
		"shape": &r.Shape, "seed": &r.Seed, "started": &r.Started, "wall_ms": &r.WallMS}
	hasRuns := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		dst, known := fields[tok]
		switch {
		case known:
			err = dec.Decode(dst)
		case tok == "runs":
			hasRuns = true
			limit := maxRuns
			if r.Planned >= 1 && r.Planned < maxRuns { // bench writes planned first
				limit = r.Planned
			}
			err = decodeRuns(dec, &r.Runs, limit)
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return nil, bad(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad(errors.New("data after the report"))
	}
	if !hasRuns {
		return nil, bad(errors.New("no runs"))
	}
	return &r, nil
}

// decodeRuns appends the runs of a JSON array, at most limit of them.
func decodeRuns(dec *json.Decoder, runs *[]RunReport, limit int) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errors.New("runs: not an array")
	}
	for dec.More() {
		if len(*runs) >= limit {
			return fmt.Errorf("more than %d runs: more than its plan has", limit)
		}
		var rr RunReport
		if err := dec.Decode(&rr); err != nil {
			return err
		}
		*runs = append(*runs, rr)
	}
	_, err := dec.Token()
	return err
}

// skipValue reads past one JSON value without keeping it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
