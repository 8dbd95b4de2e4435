package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/adrg/xdg"
)

// StoreDir returns where bench reports are stored:
// $XDG_DATA_HOME/harness/bench, with the platform's data directory
// (adrg/xdg) when XDG_DATA_HOME is not set.
func StoreDir() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		base = xdg.DataHome
	}
	return filepath.Join(base, "harness", "bench")
}

// ReportInfo describes one stored report without its runs.
type ReportInfo struct {
	ID        string    `json:"id"`
	Path      string    `json:"path"`
	Started   time.Time `json:"started"`
	WallMS    int64     `json:"wall_ms"`
	PlanID    string    `json:"plan_id,omitempty"`
	Shard     *Shard    `json:"shard,omitempty"`
	Runs      int       `json:"runs"`
	Agents    []string  `json:"agents"`
	Models    []string  `json:"models,omitempty"`
	Tasks     int       `json:"tasks"`
	Cancelled bool      `json:"cancelled,omitempty"`
}

// validID is what a stored report's id may hold: no separator, no dot
// first, so an id never names a file outside StoreDir. Compiled on first
// use: the bounded repeat makes it cost a third of the binary's start-up.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`) })

// SaveReport stores r as JSON under StoreDir (directory 0700, file 0600,
// written to a temporary file and renamed, so a reader never sees half a
// report) and returns its id, which it also sets in r.ID: the start time
// (UTC, to the millisecond) then the plan id's first 12 digits and the
// shard, e.g. 20261123T205500.123Z-3f2a9c01b4de-s1of3. An id already
// taken gets a -2, -3, … suffix.
func SaveReport(r *Report) (string, error) {
	dir := StoreDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("bench: storing the report: %w", err)
	}
	base := r.Started.UTC().Format("20060102T150405.000Z")
	if r.PlanID != "" {
		base += "-" + r.PlanID[:min(12, len(r.PlanID))]
	}
	if r.Shard != nil {
		base += fmt.Sprintf("-s%dof%d", r.Shard.Index, r.Shard.Count)
	}
	prev := r.ID
	for n := 1; ; n++ {
		id := base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		path := filepath.Join(dir, id+".json")
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		r.ID = id
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			r.ID = prev
			return "", fmt.Errorf("bench: storing the report: %w", err)
		}
		if err := writeAtomic(path, append(data, '\n'), 0o600); err != nil {
			r.ID = prev
			return "", fmt.Errorf("bench: storing the report: %w", err)
		}
		return id, nil
	}
}

// LoadReport reads the stored report id.
func LoadReport(id string) (*Report, error) {
	if !validID().MatchString(id) {
		return nil, fmt.Errorf("bench: report id %q: not a stored report id", id)
	}
	r, err := ReadReport(filepath.Join(StoreDir(), id+".json"))
	if err != nil {
		return nil, err
	}
	r.ID = id
	return r, nil
}

// ReadReport reads a JSON report from a file.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("bench: %s: not a bench JSON report: %v", path, err)
	}
	if r.Runs == nil && r.Groups == nil {
		return nil, fmt.Errorf("bench: %s: not a bench JSON report: no runs", path)
	}
	return &r, nil
}

// ListReports describes every stored report, newest first. A file that
// is not a report is left out; no store yet is no report, not an error.
func ListReports() ([]ReportInfo, error) {
	dir := StoreDir()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var out []ReportInfo
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !validID().MatchString(id) {
			continue
		}
		r, err := ReadReport(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, info(id, filepath.Join(dir, e.Name()), r))
	}
	slices.SortStableFunc(out, func(a, b ReportInfo) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

func info(id, path string, r *Report) ReportInfo {
	in := ReportInfo{ID: id, Path: path, Started: r.Started, WallMS: r.WallMS, PlanID: r.PlanID, Shard: r.Shard,
		Runs: len(r.Runs), Cancelled: r.Cancelled, Agents: []string{}}
	tasks := map[string]bool{}
	for _, run := range r.Runs {
		if !slices.Contains(in.Agents, run.Agent) {
			in.Agents = append(in.Agents, run.Agent)
		}
		if run.Model != "" && !slices.Contains(in.Models, run.Model) {
			in.Models = append(in.Models, run.Model)
		}
		tasks[run.Task] = true
	}
	in.Tasks = len(tasks)
	return in
}

// writeAtomic writes data to path through a temporary file in the same
// directory, synced and renamed: path holds the old content or the new,
// never a part.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
