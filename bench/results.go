package bench

import (
	"cmp"
	"context"
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
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/isolate"
)

// A results directory holds one plan's runs as they end, from one bench
// or many (the shards of a plan on a shared volume):
//
//	DIR/plan.json          the plan: its id and every run's key
//	DIR/runs/NNNNNN.json   one run's row (RunRecord), NNNNNN its index
//	DIR/logs/NNNNNN.ndjson a copy of that run's session log
//	DIR/logs/NNNNNN.trajectory.json a copy of its ATIF trajectory
//	DIR/logs/NNNNNN.artifacts/      a copy of its artifacts (Harbor tasks)
//	DIR/claims/NNNNNN.lock locked (flock) while a bench runs that run
//
// Every file is written to a temporary name and renamed, so a bench
// killed at any moment leaves whole rows or none; shards write disjoint
// rows, and the same plan.json. Benches sharing DIR (on a shared volume,
// or started twice) run each run once: a run is claimed before it runs
// (claim), and a bench that finds it claimed runs the others first, then
// waits for the claim and takes the row the other bench recorded. The
// kernel drops the lock of a bench that dies, so a crashed bench's runs
// are claimed again by the next.

// PlanFile is the plan of a results directory.
type PlanFile struct {
	Version int    `json:"version"`
	PlanID  string `json:"plan_id"`
	// Isolate is the engine the plan's runs are made in (Plan.Isolate);
	// a plan.json of an earlier harness has none: it is taken as
	// isolate.None, whose plan ids are as they were.
	Isolate string `json:"isolate,omitempty"`
	// Mock is the scripted model's scenario (Plan.Mock); "" for the
	// agents' own models, and in a plan.json of an earlier harness.
	Mock string `json:"mock,omitempty"`
	// Permissions and MaxTurns are the agents' permission mode and turn
	// limit (Plan.Permissions, MaxTurns); a plan.json of an earlier
	// harness has neither: it is taken as full access and no limit, whose
	// plan ids are as they were.
	Permissions string   `json:"permissions,omitempty"`
	MaxTurns    int      `json:"max_turns,omitempty"`
	Runs        []RunKey `json:"runs"`
}

// conditions are the plan's, an earlier harness's defaults filled in.
func (pf *PlanFile) conditions() conditions {
	return conditions{engine: cmp.Or(pf.Isolate, isolate.None), mock: pf.Mock,
		permissions: cmp.Or(pf.Permissions, harness.FullAccess), maxTurns: pf.MaxTurns}
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
	// TrajectoryCopy is the copy of its ATIF trajectory, likewise.
	TrajectoryCopy string `json:"trajectory_copy,omitempty"`
	// ArtifactsCopy is the copy of its artifacts directory, likewise.
	ArtifactsCopy string `json:"artifacts_copy,omitempty"`
}

// Results records the runs of one bench in a results directory. Its
// methods are safe for concurrent use; a nil *Results records nothing.
type Results struct {
	dir     string
	planID  string
	planned int
	shard   *Shard
	prior   map[int]RunReport
}

// OpenResults opens (creating it, 0700) the results directory dir for
// the expanded plan specs run in the isolation engine (Plan.Isolate)
// against the scripted model's scenario mock (Plan.Mock, "" for none).
// It fails when dir holds another plan's runs (the same runs in another
// engine, or against another model, are another plan), or a row it
// cannot read: it never overwrites or removes what is there.
// Its runs are made with full access and no turn limit; bench.Run
// opens it with the plan's.
func OpenResults(dir string, specs []Spec, engine, mock string) (*Results, error) {
	return openResults(dir, specs, Plan{Isolate: engine, Mock: mock}.conditions())
}

// openResults is OpenResults for the runs of specs made under c.
func openResults(dir string, specs []Spec, c conditions) (*Results, error) {
	id := specsID(specs, c)
	for _, d := range []string{dir, filepath.Join(dir, "runs"), filepath.Join(dir, "logs"), filepath.Join(dir, "claims")} {
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
		data, _ := json.MarshalIndent(PlanFile{Version: 1, PlanID: id, Isolate: c.engine, Mock: c.mock,
			Permissions: c.permissions, MaxTurns: c.maxTurns, Runs: keys}, "", "  ")
		if err := regfile.WriteFile(filepath.Join(dir, "plan.json"), append(data, '\n'), 0o600, regfile.Synced()); err != nil {
			return nil, fmt.Errorf("bench: --results: %w", err)
		}
	case err != nil:
		return nil, err
	case pf.PlanID != id:
		was := pf.conditions()
		switch {
		case specsID(specs, was) != pf.PlanID: // another plan
		case was.engine != c.engine:
			return nil, fmt.Errorf("bench: --results %s holds the runs of this plan under --isolate %s%s, not %s: the runs of two engines do not mix; use another directory",
				dir, was.engine, unrecorded(pf.Isolate), c.engine)
		case was.mock != c.mock:
			return nil, fmt.Errorf("bench: --results %s holds the runs of this plan %s, not %s: the runs of a scripted model and of another model do not mix; use another directory",
				dir, mockFlag(was.mock), mockFlag(c.mock))
		case was.permissions != c.permissions || was.maxTurns != c.maxTurns:
			return nil, fmt.Errorf("bench: --results %s holds the runs of this plan %s, not %s: runs that may do different things do not mix; use another directory",
				dir, agentLimits(was), agentLimits(c))
		}
		return nil, fmt.Errorf("bench: --results %s holds the runs of plan %s, not of this plan (%s): use another directory", dir, short(pf.PlanID), short(id))
	}
	recs, err := readRecords(dir, id, len(specs))
	if err != nil {
		return nil, err
	}
	r := &Results{dir: dir, planID: id, planned: len(specs), prior: map[int]RunReport{}}
	for _, rec := range recs {
		// A row of this plan for another run than its index's was not
		// written by bench: refused, as merge refuses it, rather than
		// run again over it.
		if rec.Run.Key() != specs[rec.Run.Index].Key() {
			return nil, fmt.Errorf("bench: --results %s: %s holds run #%d, which is not the run the plan has at that index (changed by hand?); move it away to run that run again",
				dir, filepath.Join("runs", rowName(rec.Run.Index)), rec.Run.Index+1)
		}
		r.prior[rec.Run.Index] = rec.Run
	}
	return r, nil
}

func short(id string) string { return id[:min(12, len(id))] }

// mockFlag says which model a plan's runs were made against, for a
// message: the scripted model's scenario, or none ("" in the files of an
// earlier harness too).
func mockFlag(mock string) string {
	if mock == "" {
		return "without --mock"
	}
	return "with --mock " + mock
}

// agentLimits says what a plan's agents may do, for a message: the
// permission mode and turn limit as their flags give them.
func agentLimits(c conditions) string {
	s := "with --permissions " + c.permissions
	if c.maxTurns == 0 {
		return s + " and no --max-turns"
	}
	return s + fmt.Sprintf(" --max-turns %d", c.maxTurns)
}

// unrecorded notes an engine taken as none because its file, written by
// an earlier harness, names none.
func unrecorded(recorded string) string {
	if recorded == "" {
		return " (taken as none: written by an earlier harness, which did not record the engine)"
	}
	return ""
}

// The most a results directory's files may weigh: far above what bench
// writes (a row keeps 16 KiB of check output), they keep a directory on a
// shared volume, which anyone with access may fill, from swelling a
// reader.
const (
	maxPlanFile = 64 << 20
	maxRowFile  = 1 << 20
)

// readPlanFile reads dir's plan.json: at most MaxRuns runs, each at its
// index, at most MaxGroups agent × model groups.
func readPlanFile(dir string) (*PlanFile, error) {
	path := filepath.Join(dir, "plan.json")
	data, err := readCapped(path, maxPlanFile)
	if err != nil {
		return nil, err
	}
	var pf PlanFile
	if err := json.Unmarshal(data, &pf); err != nil || pf.PlanID == "" {
		return nil, fmt.Errorf("bench: %s: not a results plan file (corrupt?)", path)
	}
	if len(pf.Runs) < 1 || len(pf.Runs) > maxRuns {
		return nil, fmt.Errorf("bench: %s: a plan of %d runs: not a plan bench makes (1 to %d)", path, len(pf.Runs), maxRuns)
	}
	groups := map[[2]string]bool{}
	for i, k := range pf.Runs {
		if k.Index != i || k.Agent == "" {
			return nil, fmt.Errorf("bench: %s: run #%d is not a run of a plan (corrupt?)", path, i+1)
		}
		if groups[[2]string{k.Agent, k.Model}] = true; len(groups) > maxGroups {
			return nil, fmt.Errorf("bench: %s: more than %d agent × model groups: not a plan bench makes", path, maxGroups)
		}
	}
	return &pf, nil
}

// rowName is the file name of run index i's row.
func rowName(i int) string { return fmt.Sprintf("%06d.json", i) }

// readRecords reads every row of dir, a plan of planned runs, in index
// order; a row that does not parse, is not named for a run of the plan,
// or belongs to another plan, is an error naming its file. The directory
// is read a batch of names at a time: junk names cost nothing kept.
func readRecords(dir, planID string, planned int) ([]RunRecord, error) {
	d, err := os.Open(filepath.Join(dir, "runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer d.Close()
	var out []RunRecord
	for {
		entries, err := d.ReadDir(256)
		for _, e := range entries {
			rec, ok, err := readRecord(dir, e.Name(), planID, planned)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, rec)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
	}
	slices.SortFunc(out, func(a, b RunRecord) int { return a.Run.Index - b.Run.Index })
	return out, nil
}

// readRecord reads the row of dir named name; ok is false for a
// temporary file of a row being written.
func readRecord(dir, name, planID string, planned int) (rec RunRecord, ok bool, err error) {
	if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
		return rec, false, nil
	}
	path := filepath.Join(dir, "runs", name)
	n, aerr := strconv.Atoi(strings.TrimSuffix(name, ".json"))
	if aerr != nil || n < 0 || n >= planned || name != rowName(n) {
		return rec, false, fmt.Errorf("bench: %s: not the row of a run of this plan of %d runs; move it away", path, planned)
	}
	data, err := readCapped(path, maxRowFile)
	if err != nil {
		return rec, false, err
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.Run.Agent == "" {
		return rec, false, fmt.Errorf("bench: %s: not a run record (corrupt?); move it away to run that run again", path)
	}
	if rec.PlanID != planID {
		return rec, false, fmt.Errorf("bench: %s: a run of plan %s, not %s", path, short(rec.PlanID), short(planID))
	}
	if n != rec.Run.Index {
		return rec, false, fmt.Errorf("bench: %s: holds run #%d, not the one its name says", path, rec.Run.Index+1)
	}
	if err := rec.Run.figureError(); err != nil {
		return rec, false, fmt.Errorf("bench: %s: %w", path, err)
	}
	return rec, true, nil
}

// readCapped reads the regular file path, at most max bytes. Anything
// else is an error: a larger file, or a FIFO or device, which is opened
// without blocking and never read, so no file put in a results directory
// can hang or swell its reader.
func readCapped(path string, max int64) ([]byte, error) {
	b, err := regfile.ReadFile(path, max)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return b, nil
}

// final reports whether a run's row is worth keeping: a run that was
// skipped or cancelled (the bench was interrupted), whose check the
// interrupt cut short (no verdict: the run is not over), or whose agent
// never started (RunReport.NotRun: setup failed, not installed), says
// nothing about the agent and is run again. An unsupported run is kept:
// the same machine and engine would refuse it again.
func final(rr RunReport) bool {
	switch {
	case rr.Status == StatusSkipped, rr.cutShort():
		return false
	case rr.NotRun() && rr.Reason != ReasonUnsupported:
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

// claimPoll is how often a bench waiting for another bench's claim tries
// it again: there is no cross-process notice of a lock's release.
const claimPoll = 200 * time.Millisecond

// claim takes run s for this bench before it runs. When it is this
// bench's to run, release is set: call it once the run's row is recorded.
// When another bench recorded s meanwhile, done is true and rr is that
// row. When another bench holds s, neither: with wait false at once, else
// only once ctx is done (the run is then skipped). err is a claim that
// could not be made or a row that cannot be read: the run is not run.
// A nil *Results claims everything.
func (r *Results) claim(ctx context.Context, s Spec, wait bool) (release func(), rr RunReport, done bool, err error) {
	if r == nil {
		return func() {}, rr, false, nil
	}
	path := filepath.Join(r.dir, "claims", fmt.Sprintf("%06d.lock", s.Index))
	for {
		// Never removed: a lock file unlinked while another bench waits
		// on it would let a third lock a new file of the same name.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, rr, false, fmt.Errorf("claiming the run in --results: %w", err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			release = func() { f.Close() } // closing the last descriptor unlocks
			break
		}
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, rr, false, fmt.Errorf("claiming the run in --results: %w", err)
		}
		if !wait {
			return nil, rr, false, nil
		}
		select {
		case <-ctx.Done():
			return nil, rr, false, nil
		case <-time.After(claimPoll):
		}
	}
	// Claimed: the bench that held it may have recorded it since this
	// one opened the directory.
	rec, ok, err := readRecord(r.dir, rowName(s.Index), r.planID, r.planned)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		release()
		return nil, rr, false, err
	case ok && final(rec.Run) && rec.Run.Key() == s.Key():
		release()
		rec.Run.Resumed = true
		return nil, rec.Run, true, nil
	}
	return release, rr, false, nil
}

// record writes rr's row, with a copy of its session log, unless the run
// did not end on its own. A failure to record is kept in rr.Error: the
// run itself is still a figure of this report.
func (r *Results) record(rr *RunReport) {
	if r == nil || !final(*rr) {
		return
	}
	name := strings.TrimSuffix(rowName(rr.Index), ".json")
	rec := RunRecord{PlanID: r.planID, Shard: r.shard, Run: *rr}
	if rr.Log != "" {
		rel := filepath.Join("logs", name+".ndjson")
		if err := copyAtomic(rr.Log, filepath.Join(r.dir, rel)); err == nil {
			rec.LogCopy = rel
		}
	}
	if rr.Trajectory != "" {
		rel := filepath.Join("logs", name+".trajectory.json")
		if err := copyAtomic(rr.Trajectory, filepath.Join(r.dir, rel)); err == nil {
			rec.TrajectoryCopy = rel
		}
	}
	if rr.Artifacts != "" {
		rel := filepath.Join("logs", name+".artifacts")
		if err := copyDirTo(rr.Artifacts, filepath.Join(r.dir, rel)); err == nil {
			rec.ArtifactsCopy = rel
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		err = regfile.WriteFile(filepath.Join(r.dir, "runs", name+".json"), append(data, '\n'), 0o600, regfile.Synced())
	}
	if err != nil && rr.Error == "" {
		rr.Error = "recording the run in --results: " + err.Error()
	}
}

// copyAtomic copies src to dst atomically (0600), synced.
func copyAtomic(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return regfile.Replace(dst, 0o600, func(f *os.File) error {
		_, err := io.Copy(f, in)
		return err
	}, regfile.Synced())
}
