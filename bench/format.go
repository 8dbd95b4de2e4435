package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentharness/harness/internal/plural"
	"github.com/agentharness/harness/isolate"
)

// Formats lists the report formats Write knows.
var Formats = []string{"table", "markdown", "json", "csv"}

// Write renders the report in format: table (aligned text: the groups,
// then one line per run), markdown (the same two tables), json (the
// Report, indented) or csv (one row per run, with a header).
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "table":
		return r.writeTable(w)
	case "markdown":
		return r.writeMarkdown(w)
	case "json":
		return writeJSON(w, r)
	case "csv":
		return r.writeCSV(w)
	}
	return fmt.Errorf("bench: unknown report format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

var groupHeader = []string{"AGENT", "MODEL", "RUNS", "SUCCESS", "PASS", "WALL P50", "WALL P90", "TOKENS IN/OUT P50", "COST P50", "COST TOTAL"}

func (g Group) cells() []string {
	runs := strconv.Itoa(g.Runs)
	var apart []string
	if g.NotRun > 0 {
		apart = append(apart, fmt.Sprintf("+%d not run", g.NotRun))
	}
	if g.Cancelled > 0 {
		apart = append(apart, fmt.Sprintf("+%d cancelled", g.Cancelled))
	}
	if g.Skipped > 0 {
		apart = append(apart, fmt.Sprintf("+%d skipped", g.Skipped))
	}
	if len(apart) > 0 {
		runs += " (" + strings.Join(apart, ", ") + ")"
	}
	success := "-"
	if g.Runs > 0 {
		success = fmt.Sprintf("%s (%d/%d) [%s–%s]", pct(g.SuccessRate), g.Succeeded, g.Runs, pct(g.SuccessCILow), pct(g.SuccessCIHigh))
	}
	pass := "-"
	if g.PassRate != nil {
		pass = fmt.Sprintf("%s (%d/%d)", pct(*g.PassRate), g.Passed, g.Checked)
		if g.PassCILow != nil && g.PassCIHigh != nil {
			pass += fmt.Sprintf(" [%s–%s]", pct(*g.PassCILow), pct(*g.PassCIHigh))
		}
	}
	walls, tokens := "-", "-"
	p90 := "-"
	if g.Runs > 0 {
		walls, p90 = fmt.Sprintf("%s [%s–%s]", dur(g.WallP50MS), dur(g.WallP50CILowMS), dur(g.WallP50CIHighMS)), dur(g.WallP90MS)
		tokens = fmt.Sprintf("%d/%d", g.InputP50, g.OutputP50)
	}
	return []string{g.Agent, modelCell(g.Model, g.ReportedModel), runs, success, pass, walls, p90, tokens,
		cost(g.CostP50USD, g.CostEstimated), cost(g.CostTotalUSD, g.CostEstimated)}
}

var compHeader = []string{"A VS B", "ON", "PAIRS", "ONLY A/ONLY B", "Δ RATE [95% CI]", "P", "WINNER"}

func (c Comparison) cells() []string {
	name := func(agent, model string) string {
		if model != "" {
			return agent + " " + model
		}
		return agent
	}
	a, b := name(c.AgentA, c.ModelA), name(c.AgentB, c.ModelB)
	winner := "-"
	switch c.Winner {
	case "a":
		winner = a
	case "b":
		winner = b
	}
	if c.Pairs == 0 { // no task and repeat both made: no interval to show
		return []string{a + " vs " + b, c.Metric, "0", "-", "nothing to compare: no pair", "-", winner}
	}
	return []string{a + " vs " + b, c.Metric, strconv.Itoa(c.Pairs), fmt.Sprintf("%d/%d", c.OnlyA, c.OnlyB),
		fmt.Sprintf("%+.0f%% [%+.0f%%, %+.0f%%]", c.Diff*100, c.DiffCILow*100, c.DiffCIHigh*100),
		strconv.FormatFloat(c.PValue, 'g', 3, 64), winner}
}

var runHeader = []string{"#", "TASK", "AGENT", "MODEL", "REP", "STATUS", "CHECK", "WALL", "FIRST OUT", "FIRST TOOL",
	"TURNS", "TOOLS", "FILES", "TOKENS IN/OUT/CACHED/REASONING", "COST", "LOG"}

func (r RunReport) cells() []string {
	status := r.Status
	var why []string
	if r.Reason != "" {
		why = append(why, r.Reason)
	}
	if r.Killed {
		why = append(why, "killed")
	}
	if r.NotRun() {
		why = append(why, "not run")
	}
	if len(why) > 0 {
		status += " (" + strings.Join(why, ", ") + ")"
	}
	check := "-"
	if c := r.Check; c != nil {
		switch {
		case c.Passed:
			check = "pass"
		case c.TimedOut:
			check = "fail (timeout)"
		case c.Error != "":
			check = "none (" + c.Error + ")"
		default:
			check = fmt.Sprintf("fail (exit %d)", c.ExitCode)
		}
	}
	tools := strconv.Itoa(r.ToolCalls)
	if len(r.ToolsByKind) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(r.ToolsByKind)) {
			kinds = append(kinds, fmt.Sprintf("%s:%d", k, r.ToolsByKind[k]))
		}
		tools += " " + strings.Join(kinds, ",")
	}
	files := "-"
	if f := r.Files; f != nil {
		files = fmt.Sprintf("%d +%d -%d", f.Files, f.Insertions, f.Deletions)
	}
	t := r.Tokens
	wall, tokens := "-", "-"
	if r.Status != StatusSkipped {
		wall = dur(r.WallMS)
		tokens = fmt.Sprintf("%d/%d/%d/%d", t.Input, t.Output, t.CacheRead+t.CacheWrite, t.Reasoning)
	}
	return []string{strconv.Itoa(r.Index + 1), orDash(r.Task), r.Agent, modelCell(r.Model, r.ReportedModel), strconv.Itoa(r.Repeat),
		status, check, wall, optDur(r.FirstOutputMS), optDur(r.FirstToolMS), strconv.Itoa(r.Turns), tools, files,
		tokens, cost(r.CostUSD, r.CostEstimated), orDash(r.Log)}
}

func (r *Report) footer() []string {
	var notes []string
	est := false
	for _, g := range r.Groups {
		est = est || g.CostEstimated
	}
	if est {
		notes = append(notes, "~ cost estimated by harness from the model registry (the agent reported none)")
	}
	notRun, cut := 0, 0
	for _, g := range r.Groups {
		notRun += g.NotRun
		cut += g.Cancelled
	}
	if notRun > 0 {
		notes = append(notes, fmt.Sprintf("not run: %s ended before their agent started (setup, not installed, spawn failed, unsupported): in no rate, median or comparison", plural.Count(int64(notRun), "run")))
	}
	if cut > 0 {
		notes = append(notes, fmt.Sprintf("cancelled: %s cut short by the bench's cancel (the agent or its check): in no rate, median or comparison; a resume runs them again", plural.Count(int64(cut), "run")))
	}
	notes = append(notes, "percentiles: nearest rank over started runs; pass rate over runs with a check verdict")
	notes = append(notes, "[low–high]: 95% intervals: Wilson for rates, bootstrap (seeded) for medians")
	if len(r.Comparisons) > 0 {
		notes = append(notes, "A vs B: paired on the same task and repeat; Δ = A − B with Newcombe's 95% interval, p from the exact McNemar test; a winner only when the interval excludes zero and p < 0.05")
	}
	if r.Isolate != "" && r.Isolate != isolate.None {
		notes = append(notes, "runs isolated under "+r.Isolate)
	}
	if r.Mock != "" {
		notes = append(notes, "runs against the scripted model (--mock "+r.Mock+"), not the agents' own models")
	}
	if r.Shard != nil {
		notes = append(notes, fmt.Sprintf("shard %s of plan %s: %d of its %d runs", r.Shard, short(r.PlanID), len(r.Runs), r.Planned))
	}
	if len(r.Missing) > 0 || len(r.Duplicates) > 0 {
		notes = append(notes, fmt.Sprintf("merged plan %s: %d missing, %d duplicate runs", short(r.PlanID), len(r.Missing), len(r.Duplicates)))
	}
	notes = append(notes, keyList("missing", r.Missing)...)
	notes = append(notes, keyList("duplicate", r.Duplicates)...)
	if r.Cancelled {
		notes = append(notes, "the bench was cancelled: the report is partial")
	}
	if r.Dir != "" {
		notes = append(notes, "run trees kept in "+r.Dir)
	}
	return notes
}

// tables are the report's tables: the groups, the paired comparisons
// when there are any, and the runs.
func (r *Report) tables() []table {
	t := []table{{header: groupHeader, rows: cellsOf(r.Groups, Group.cells)}}
	if len(r.Comparisons) > 0 {
		t = append(t, table{title: "Paired comparisons", header: compHeader, rows: cellsOf(r.Comparisons, Comparison.cells)})
	}
	return append(t, table{title: "Runs", header: runHeader, rows: cellsOf(r.Runs, RunReport.cells)})
}

func cellsOf[T any](items []T, cells func(T) []string) [][]string {
	rows := make([][]string, len(items))
	for i, it := range items {
		rows[i] = cells(it)
	}
	return rows
}

func (r *Report) writeTable(w io.Writer) error {
	if err := writeTables(w, false, r.tables()...); err != nil {
		return err
	}
	for _, n := range r.footer() {
		fmt.Fprintln(w, n)
	}
	_, err := fmt.Fprintln(w, r.summary())
	return err
}

func (r *Report) writeMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "## Bench: %s\n\n", r.summary())
	if err := writeTables(w, true, r.tables()...); err != nil {
		return err
	}
	for _, n := range r.footer() {
		fmt.Fprintln(w, "- "+n)
	}
	return nil
}

// table is one table of a report or a comparison.
type table struct {
	title  string // its markdown heading; "" for none
	header []string
	rows   [][]string
}

// cellEscapes writes a line break or a tab in a cell (a task named by
// its directory may hold one) as Go writes it in a string, so that a
// row stays one line and its columns stay aligned.
var cellEscapes = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

func oneCell(s string) string { return cellEscapes.Replace(s) }

// writeTables writes the tables, each followed by a blank line: aligned
// text, or markdown (a "|" in a cell escaped).
func writeTables(w io.Writer, markdown bool, tables ...table) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range tables {
		if markdown {
			if t.title != "" {
				fmt.Fprintf(w, "### %s\n\n", t.title)
			}
			fmt.Fprintln(w, "| "+strings.Join(t.header, " | ")+" |")
			fmt.Fprintln(w, "|"+strings.Repeat("---|", len(t.header)))
			for _, cells := range t.rows {
				esc := make([]string, len(cells))
				for i, c := range cells {
					esc[i] = strings.ReplaceAll(oneCell(c), "|", `\|`)
				}
				fmt.Fprintln(w, "| "+strings.Join(esc, " | ")+" |")
			}
		} else {
			fmt.Fprintln(tw, strings.Join(t.header, "\t"))
			for _, cells := range t.rows {
				esc := make([]string, len(cells))
				for i, c := range cells {
					esc[i] = oneCell(c)
				}
				fmt.Fprintln(tw, strings.Join(esc, "\t"))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

// writeJSON writes v indented, as the reports' json format.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var csvHeader = []string{"index", "task", "agent", "model", "reported_model", "repeat", "run", "status", "reason",
	"killed", "check", "check_exit_code", "wall_ms", "first_output_ms", "first_tool_ms", "turns", "tool_calls",
	"tools_by_kind", "files_changed", "insertions", "deletions", "input_tokens", "output_tokens",
	"cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "cost_usd", "cost_estimated", "log", "tree", "error",
	"resumed", "plan_id", "group_success_rate", "group_success_ci_low", "group_success_ci_high",
	"group_pass_rate", "group_pass_ci_low", "group_pass_ci_high"}

func (r *Report) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	type gk struct{ agent, model string }
	groups := map[gk]Group{}
	for _, g := range r.Groups {
		groups[gk{g.Agent, g.Model}] = g
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	optNum := func(f *float64) string {
		if f == nil {
			return ""
		}
		return num(*f)
	}
	for _, run := range r.Runs {
		g, hasGroup := groups[gk{run.Agent, run.Model}]
		gcells := make([]string, 6)
		if hasGroup && g.Runs > 0 {
			gcells[0], gcells[1], gcells[2] = num(g.SuccessRate), num(g.SuccessCILow), num(g.SuccessCIHigh)
		}
		if hasGroup {
			gcells[3], gcells[4], gcells[5] = optNum(g.PassRate), optNum(g.PassCILow), optNum(g.PassCIHigh)
		}
		check, checkExit := "", ""
		if c := run.Check; c != nil {
			check, checkExit = "fail", strconv.Itoa(c.ExitCode)
			if c.Passed {
				check = "pass"
			} else if c.Error != "" && !c.TimedOut {
				check = "none"
			}
		}
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(run.ToolsByKind)) {
			kinds = append(kinds, fmt.Sprintf("%s:%d", k, run.ToolsByKind[k]))
		}
		files, ins, del := "", "", ""
		if f := run.Files; f != nil {
			files, ins, del = strconv.Itoa(f.Files), strconv.Itoa(f.Insertions), strconv.Itoa(f.Deletions)
		}
		costUSD := ""
		if run.CostUSD != nil {
			costUSD = strconv.FormatFloat(*run.CostUSD, 'f', -1, 64)
		}
		t := run.Tokens
		i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
		opt := func(p *int64) string {
			if p == nil {
				return ""
			}
			return i64(*p)
		}
		// index as JSON's and the results directory's (from 0), not the
		// table's "#" (from 1): a program joins the CSV with those.
		cw.Write(append([]string{strconv.Itoa(run.Index), run.Task, run.Agent, run.Model, run.ReportedModel,
			strconv.Itoa(run.Repeat), run.Run, run.Status, run.Reason, strconv.FormatBool(run.Killed), check, checkExit,
			i64(run.WallMS), opt(run.FirstOutputMS), opt(run.FirstToolMS), strconv.Itoa(run.Turns),
			strconv.Itoa(run.ToolCalls), strings.Join(kinds, " "), files, ins, del, i64(t.Input), i64(t.Output),
			i64(t.CacheRead), i64(t.CacheWrite), i64(t.Reasoning), costUSD, strconv.FormatBool(run.CostEstimated),
			run.Log, run.Tree, run.Error, strconv.FormatBool(run.Resumed), r.PlanID}, gcells...))
	}
	cw.Flush()
	return cw.Error()
}

// modelCell is the model asked for, else the one the agent reported in
// parentheses, else "-".
func modelCell(asked, reported string) string {
	switch {
	case asked != "":
		return asked
	case reported != "":
		return "(" + reported + ")"
	}
	return "-"
}

func pct(f float64) string { return strconv.Itoa(int(f*100+0.5)) + "%" }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// dur renders milliseconds: 850ms, 12.3s, 4m05s.
func dur(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return strconv.FormatInt(ms, 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func optDur(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return dur(*ms)
}

// cost renders a cost; "~" marks an estimate.
func cost(usd *float64, estimated bool) string {
	if usd == nil {
		return "-"
	}
	s := "$" + strconv.FormatFloat(*usd, 'f', 4, 64)
	if estimated {
		s = "~" + s
	}
	return s
}

// keyList names up to 10 runs, one note.
func keyList(what string, keys []RunKey) []string {
	if len(keys) == 0 {
		return nil
	}
	var names []string
	for _, k := range keys[:min(10, len(keys))] {
		names = append(names, k.String())
	}
	if len(keys) > 10 {
		names = append(names, fmt.Sprintf("… %d more", len(keys)-10))
	}
	return []string{what + ": " + strings.Join(names, ", ")}
}

// summary is the report's one-line size: runs, parallelism, wall time (a
// merged report ran at no one parallelism, and an empty one at none).
func (r *Report) summary() string {
	runs := plural.Count(int64(len(r.Runs)), "run")
	if r.Parallel == 0 || len(r.Runs) == 0 {
		return fmt.Sprintf("%s, %s", runs, dur(r.WallMS))
	}
	// No more ran at once than there were runs, whatever --parallel allowed.
	return fmt.Sprintf("%s, %d at a time, %s", runs, min(r.Parallel, len(r.Runs)), dur(r.WallMS))
}
