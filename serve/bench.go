package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/adrg/xdg"

	"github.com/agentharness/harness/bench"
)

// ReportStore is where stored bench reports are read from.
type ReportStore interface {
	// List returns the stored reports, newest first.
	List() ([]ReportInfo, error)
	// Load returns one report; an unknown id is an error wrapping
	// fs.ErrNotExist.
	Load(id string) (*bench.Report, error)
}

// ReportInfo is one stored bench report, as GET /api/bench lists it.
type ReportInfo struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	WallMS  int64     `json:"wall_ms"`
	Agents  []string  `json:"agents"`
	Tasks   []string  `json:"tasks,omitempty"`
	Runs    int       `json:"runs"`
}

// DirStore reads the reports `harness bench` stores: one <id>.json file of
// bench.Report each, in Dir.
type DirStore struct{ Dir string }

// BenchDir is where bench reports are stored: $XDG_DATA_HOME/harness/bench.
func BenchDir(getenv func(string) string) string {
	base := ""
	if getenv != nil {
		base = getenv("XDG_DATA_HOME")
	}
	if base == "" {
		base = xdg.DataHome
	}
	return filepath.Join(base, "harness", "bench")
}

// List returns the reports in the directory, newest first; a report that
// does not parse is left out.
func (d DirStore) List() ([]ReportInfo, error) {
	entries, err := os.ReadDir(d.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []ReportInfo{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []ReportInfo{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || strings.HasPrefix(id, ".") {
			continue
		}
		rep, err := d.Load(id)
		if err != nil {
			continue
		}
		out = append(out, infoOf(id, rep))
	}
	slices.SortFunc(out, func(a, b ReportInfo) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

// Load reads report id.
func (d DirStore) Load(id string) (*bench.Report, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("bench report %q: %w", id, fs.ErrNotExist)
	}
	data, err := os.ReadFile(filepath.Join(d.Dir, id+".json"))
	if err != nil {
		return nil, err
	}
	var rep bench.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("bench report %s: %w", id, err)
	}
	return &rep, nil
}

func infoOf(id string, rep *bench.Report) ReportInfo {
	ri := ReportInfo{ID: id, Started: rep.Started, WallMS: rep.WallMS, Runs: len(rep.Runs), Agents: []string{}}
	for _, g := range rep.Groups {
		ri.Agents = append(ri.Agents, groupLabel(g.Agent, g.Model))
	}
	for _, r := range rep.Runs {
		if r.Task != "" && !slices.Contains(ri.Tasks, r.Task) {
			ri.Tasks = append(ri.Tasks, r.Task)
		}
	}
	return ri
}

func groupLabel(agent, model string) string {
	if model == "" {
		return agent
	}
	return agent + " · " + model
}

// Interval is a group's pass rate with its 95 % Wilson score interval.
// Basis is "check" when the rate counts the runs whose check passed, or
// "success" when no run had a check and it counts the runs that ended in
// success.
type Interval struct {
	Label string  `json:"label"`
	Agent string  `json:"agent"`
	Model string  `json:"model,omitempty"`
	Basis string  `json:"basis"`
	K     int     `json:"k"`
	N     int     `json:"n"`
	Rate  float64 `json:"rate"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// benchDetail is the body of GET /api/bench/{id}.
type benchDetail struct {
	ReportInfo
	Intervals []Interval    `json:"intervals"`
	Report    *bench.Report `json:"report"`
}

func intervals(rep *bench.Report) []Interval {
	out := make([]Interval, 0, len(rep.Groups))
	for _, g := range rep.Groups {
		iv := Interval{Label: groupLabel(g.Agent, g.Model), Agent: g.Agent, Model: g.Model, Basis: "check", K: g.Passed, N: g.Checked}
		if g.Checked == 0 {
			iv.Basis, iv.K, iv.N = "success", g.Succeeded, g.Runs
		}
		iv.Rate, iv.Lo, iv.Hi = wilson(iv.K, iv.N)
		out = append(out, iv)
	}
	return out
}

// wilson returns k/n and its 95 % Wilson score interval; all zero for n 0.
func wilson(k, n int) (rate, lo, hi float64) {
	if n <= 0 {
		return 0, 0, 0
	}
	const z = 1.959963984540054
	p, fn := float64(k)/float64(n), float64(n)
	den := 1 + z*z/fn
	mid := (p + z*z/(2*fn)) / den
	half := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / den
	return p, math.Max(0, mid-half), math.Min(1, mid+half)
}

func (s *Server) listBench(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Bench == nil {
		writeJSON(w, http.StatusOK, map[string]any{"reports": []ReportInfo{}})
		return
	}
	list, err := s.cfg.Bench.List()
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reports": list})
}

func (s *Server) getBench(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.cfg.Bench == nil {
		jsonError(w, http.StatusNotFound, "no such bench report: "+id)
		return
	}
	rep, err := s.cfg.Bench.Load(id)
	if errors.Is(err, fs.ErrNotExist) {
		jsonError(w, http.StatusNotFound, "no such bench report: "+id)
		return
	}
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, benchDetail{ReportInfo: infoOf(id, rep), Intervals: intervals(rep), Report: rep})
}
