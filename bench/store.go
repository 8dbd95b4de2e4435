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

	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/internal/xdgdir"
)

// StoreDir returns where bench reports are stored:
// $XDG_DATA_HOME/harness/bench, with the platform's data directory
// (adrg/xdg) when XDG_DATA_HOME is not set.
func StoreDir() string {
	return xdgdir.Data(os.Getenv, "bench")
}

// Store is a directory of stored reports, one <id>.json file each: the
// user's is StoreDir. 'harness bench' writes it, 'harness serve' and
// 'harness bench compare' read it.
type Store struct{ Dir string }

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
	Groups    []string  `json:"groups"`          // the groups' labels (Group.Label), in the report's order
	Tasks     []string  `json:"tasks,omitempty"` // the task names, in the order of the runs
	Cancelled bool      `json:"cancelled,omitempty"`
}

// validID is what a stored report's id may hold: no separator, no dot
// first, so an id never names a file outside its store. Compiled on first
// use: the bounded repeat makes it cost a third of the binary's start-up.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`) })

// SaveReport stores r in the user's store (Store.Save).
func SaveReport(r *Report) (string, error) { return Store{StoreDir()}.Save(r) }

// LoadReport reads the report id of the user's store (Store.Load).
func LoadReport(id string) (*Report, error) { return Store{StoreDir()}.Load(id) }

// Save stores r as JSON (directory 0700, file 0600, written to a
// temporary file and renamed, so a reader never sees half a report) and
// returns its id, which it also sets in r.ID: the start time (UTC, to the
// millisecond) then the plan id's first 12 digits and the shard, e.g.
// 20261123T205500.123Z-3f2a9c01b4de-s1of3. An id already taken gets a
// -2, -3, … suffix.
func (s Store) Save(r *Report) (string, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
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
		path := s.path(id)
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		r.ID = id
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			r.ID = prev
			return "", fmt.Errorf("bench: storing the report: %w", err)
		}
		if err := regfile.WriteFile(path, append(data, '\n'), 0o600, regfile.Synced()); err != nil {
			r.ID = prev
			return "", fmt.Errorf("bench: storing the report: %w", err)
		}
		return id, nil
	}
}

func (s Store) path(id string) string { return filepath.Join(s.Dir, id+".json") }

// ErrNotReport is why a stored report's file is not loaded: it is no
// bench JSON report (not JSON, no runs), not a regular file (a FIFO, a
// device), or larger than maxStored.
var ErrNotReport = errors.New("not a bench JSON report")

// maxStored caps the size of a stored report's file: a server reads it
// whole into memory at a client's request.
const maxStored = 256 << 20

// Load reads the stored report id. An id that cannot be stored, like a
// missing one, is an error wrapping fs.ErrNotExist; a file that is not a
// report one wrapping ErrNotReport. Its errors name the report by its id,
// not by its path (a server answers with them).
func (s Store) Load(id string) (*Report, error) {
	if !validID().MatchString(id) {
		return nil, fmt.Errorf("bench: report id %q: not a stored report id: %w", id, fs.ErrNotExist)
	}
	data, err := readStored(s.path(id))
	if err != nil {
		return nil, fmt.Errorf("bench: report %s: %w", id, err)
	}
	r, err := parseReport(data)
	if err != nil {
		return nil, fmt.Errorf("bench: report %s: %w", id, err)
	}
	r.ID = id
	return r, nil
}

// readStored reads a stored report's file if it is a regular one of at
// most maxStored bytes (regfile: a FIFO would hold its reader, a server's
// request among them, forever). Its errors do not hold the path.
func readStored(path string) ([]byte, error) {
	data, err := regfile.ReadFile(path, maxStored)
	var tooLarge *regfile.TooLargeError
	switch {
	case errors.Is(err, regfile.ErrNotRegular), errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%w: %w", ErrNotReport, pathless(err))
	case err != nil:
		return nil, pathless(err)
	}
	return data, nil
}

// pathless is err without the path an *fs.PathError names (its cause
// is kept, so errors.Is(err, fs.ErrNotExist) still holds).
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadReport reads a JSON report from a file, whole, as the store reads
// one (readStored): a regular file of at most maxStored bytes, else an
// error wrapping ErrNotReport. 'harness bench compare' reads a file with
// ReadCompareInput instead, which holds no more than its plan's runs.
func ReadReport(path string) (*Report, error) {
	data, err := readStored(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	r, err := parseReport(data)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	return r, nil
}

// parseReport decodes a JSON report; what is not one is ErrNotReport.
func parseReport(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotReport, err)
	}
	if r.Runs == nil && r.Groups == nil {
		return nil, fmt.Errorf("%w: no runs", ErrNotReport)
	}
	return &r, nil
}

// List describes every stored report, newest first.
func (s Store) List() ([]ReportInfo, error) { return Summaries(s, s.Info) }

// Info describes r, a report of the store (Load).
func (s Store) Info(r *Report) ReportInfo { return info(r.ID, s.path(r.ID), r) }

// Summaries reads every stored report, one at a time, and returns what
// summary makes of each, newest first (by start, then id). A file that
// is not a report is left out; no store yet is no report, not an error.
func Summaries[T any](s Store, summary func(*Report) T) ([]T, error) {
	entries, err := readDir(s.Dir)
	if err != nil {
		return nil, err
	}
	type stored struct {
		id      string
		started time.Time
		sum     T
	}
	var all []stored
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		r, err := s.Load(id)
		if err != nil {
			continue
		}
		all = append(all, stored{id, r.Started, summary(r)})
	}
	slices.SortStableFunc(all, func(a, b stored) int {
		if c := b.started.Compare(a.started); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	out := make([]T, len(all))
	for i, st := range all {
		out[i] = st.sum
	}
	return out, nil
}

// Lister lists a store's reports as Store.List does, keeping what it
// read between listings: a report is read again only once its file
// changed (its size or modification time, or a time within the last
// settleTime, which a file system of coarse times may not tell apart).
// serve lists the store at each request of its page, and each listing
// read and decoded every report, up to maxStored each: a 50 MB report
// made every listing take 0.5 to 0.9 s. A Lister is safe for concurrent
// use.
type Lister struct {
	Store Store
	mu    sync.Mutex
	seen  map[string]listed // by the file's id
}

// listed is what a Lister read of a file: nil info for one that is not a
// report.
type listed struct {
	size int64
	mod  time.Time
	info *ReportInfo
}

// settleTime is how recent a file's modification time may be for its
// size and time not to tell that it is unchanged.
const settleTime = 2 * time.Second

// List describes every stored report, newest first (by start, then id).
func (l *Lister) List() ([]ReportInfo, error) {
	entries, err := readDir(l.Store.Dir)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := make(map[string]listed, len(entries))
	type stored struct {
		id   string
		info ReportInfo
	}
	var all []stored
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed since the directory was read
		}
		c, ok := l.seen[id]
		if !ok || c.size != fi.Size() || !c.mod.Equal(fi.ModTime()) || time.Since(fi.ModTime()) < settleTime {
			c = listed{size: fi.Size(), mod: fi.ModTime()}
			if r, err := l.Store.Load(id); err == nil {
				in := l.Store.Info(r)
				c.info = &in
			}
		}
		seen[id] = c
		if c.info != nil {
			all = append(all, stored{id, *c.info})
		}
	}
	l.seen = seen
	slices.SortStableFunc(all, func(a, b stored) int {
		if c := b.info.Started.Compare(a.info.Started); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	out := make([]ReportInfo, len(all))
	for i, st := range all {
		out[i] = st.info
	}
	return out, nil
}

// readDir lists dir; a directory not there yet holds nothing.
func readDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return entries, nil
}

func info(id, path string, r *Report) ReportInfo {
	in := ReportInfo{ID: id, Path: path, Started: r.Started, WallMS: r.WallMS, PlanID: r.PlanID, Shard: r.Shard,
		Runs: len(r.Runs), Cancelled: r.Cancelled, Agents: []string{}, Groups: []string{}}
	for _, g := range r.Groups {
		in.Groups = append(in.Groups, g.Label())
	}
	for _, run := range r.Runs {
		if !slices.Contains(in.Agents, run.Agent) {
			in.Agents = append(in.Agents, run.Agent)
		}
		if run.Model != "" && !slices.Contains(in.Models, run.Model) {
			in.Models = append(in.Models, run.Model)
		}
		if run.Task != "" && !slices.Contains(in.Tasks, run.Task) {
			in.Tasks = append(in.Tasks, run.Task)
		}
	}
	return in
}
