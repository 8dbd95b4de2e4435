package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentharness/harness/event"
)

// A results directory holds one plan's runs as they end, from one bench
// or many (the shards of a plan on a shared volume):
//
//	DIR/plan.json          the plan: its id and every run's key
//	DIR/runs/NNNNNN.json   one run's row (RunRecord), NNNNNN its index
//	DIR/logs/NNNNNN.ndjson a copy of that run's session log
//
// Every file is written to a temporary name and renamed, so a bench
// killed at any moment leaves whole rows or none; shards write disjoint
// rows, and the same plan.json.

// PlanFile is the plan of a results directory.
type PlanFile struct {
	Version int      `json:"version"`
	PlanID  string   `json:"plan_id"`
	Runs    []RunKey `json:"runs"`
}

// RunRecord is one row of a results directory.
type RunRecord struct {
	PlanID string    `json:"plan_id"`
	Shard  *Shard    `json:"shard,omitempty"`
	Run    RunReport `json:"run"`
	// LogCopy is the copy of the run's session log, relative to the
	// results directory; "" when there was no log or it could not be
	// copied (Run.Log still names the original).
	LogCopy string `json:"log_copy,omitempty"`
}

// Results records the runs of one bench in a results directory. Its
// methods are safe for concurrent use; a nil *Results records nothing.
type Results struct {
	dir    string
	planID string
	shard  *Shard
	prior  map[int]RunReport
}

// OpenResults opens (creating it, 0700) the results directory dir for
// the expanded plan specs. It fails when dir holds another plan's runs,
// or a row it cannot read: it never overwrites or removes what is there.
func OpenResults(dir string, specs []Spec) (*Results, error) {
	id := specsID(specs)
	for _, d := range []string{dir, filepath.Join(dir, "runs"), filepath.Join(dir, "logs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("bench: --results: %w", err)
		}
	}
	pf, err := readPlanFile(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		keys := make([]RunKey, len(specs))
		for i, s := range specs {
			keys[i] = s.Key()
		}
		data, _ := json.MarshalIndent(PlanFile{Version: 1, PlanID: id, Runs: keys}, "", "  ")
		if err := writeAtomic(filepath.Join(dir, "plan.json"), append(data, '\n'), 0o600); err != nil {
			return nil, fmt.Errorf("bench: --results: %w", err)
		}
	case err != nil:
		return nil, err
	case pf.PlanID != id:
		return nil, fmt.Errorf("bench: --results %s holds the runs of plan %s, not of this plan (%s): use another directory", dir, short(pf.PlanID), short(id))
	}
	recs, err := readRecords(dir, id)
	if err != nil {
		return nil, err
	}
	r := &Results{dir: dir, planID: id, prior: map[int]RunReport{}}
	for _, rec := range recs {
		r.prior[rec.Run.Index] = rec.Run
	}
	return r, nil
}

func short(id string) string { return id[:min(12, len(id))] }

func readPlanFile(dir string) (*PlanFile, error) {
	path := filepath.Join(dir, "plan.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pf PlanFile
	if err := json.Unmarshal(data, &pf); err != nil || pf.PlanID == "" {
		return nil, fmt.Errorf("bench: %s: not a results plan file (corrupt?)", path)
	}
	return &pf, nil
}

// readRecords reads every row of dir, in index order; a row that does not
// parse, or belongs to another plan, is an error naming its file.
func readRecords(dir, planID string) ([]RunRecord, error) {
	entries, err := readDir(filepath.Join(dir, "runs"))
	if err != nil {
		return nil, err
	}
	var out []RunRecord
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue // a temporary file of a row being written
		}
		path := filepath.Join(dir, "runs", name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		var rec RunRecord
		if err := json.Unmarshal(data, &rec); err != nil || rec.Run.Agent == "" {
			return nil, fmt.Errorf("bench: %s: not a run record (corrupt?); move it away to run that run again", path)
		}
		if rec.PlanID != planID {
			return nil, fmt.Errorf("bench: %s: a run of plan %s, not %s", path, short(rec.PlanID), short(planID))
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(name, ".json")); err != nil || n != rec.Run.Index {
			return nil, fmt.Errorf("bench: %s: holds run #%d, not the one its name says", path, rec.Run.Index+1)
		}
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b RunRecord) int { return a.Run.Index - b.Run.Index })
	return out, nil
}

// final reports whether a run's row is worth keeping: a run that was
// skipped or cancelled (the bench was interrupted), or whose agent never
// started (setup failed, not installed), says nothing about the agent and
// is run again.
func final(rr RunReport) bool {
	switch {
	case rr.Status == StatusSkipped, rr.Status == event.ResultCancelled:
		return false
	case rr.Reason == ReasonSetup, rr.Reason == event.ErrNotInstalled, rr.Reason == event.ErrSpawnFailed:
		return false
	}
	return true
}

// done returns the row recorded for s by an earlier bench, if final.
func (r *Results) done(s Spec) (RunReport, bool) {
	if r == nil {
		return RunReport{}, false
	}
	rr, ok := r.prior[s.Index]
	if !ok || !final(rr) || rr.Key() != s.Key() {
		return RunReport{}, false
	}
	rr.Resumed = true
	return rr, true
}

// record writes rr's row, with a copy of its session log, unless the run
// did not end on its own. A failure to record is kept in rr.Error: the
// run itself is still a figure of this report.
func (r *Results) record(rr *RunReport) {
	if r == nil || !final(*rr) {
		return
	}
	name := fmt.Sprintf("%06d", rr.Index)
	rec := RunRecord{PlanID: r.planID, Shard: r.shard, Run: *rr}
	if rr.Log != "" {
		rel := filepath.Join("logs", name+".ndjson")
		if err := copyAtomic(rr.Log, filepath.Join(r.dir, rel)); err == nil {
			rec.LogCopy = rel
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		err = writeAtomic(filepath.Join(r.dir, "runs", name+".json"), append(data, '\n'), 0o600)
	}
	if err != nil && rr.Error == "" {
		rr.Error = "recording the run in --results: " + err.Error()
	}
}

// copyAtomic copies src to dst atomically (0600).
func copyAtomic(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return err
	}
	_, err = io.Copy(f, in)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
