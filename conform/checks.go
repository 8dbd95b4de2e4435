package conform

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/mockmodel"
	"github.com/agentharness/harness/process"
)

// KnownNoDiff lists where an agent's own data leaves a file's content
// before a call unknown, so its edit may end diff_skipped "unknown" (no
// diff, never a wrong one) and still conform. Shrink it as adapters learn
// more; each entry says why.
var KnownNoDiff = map[string]string{
	"codex/cli":    "Codex applies its patch as it prints item.started, before the harness can read the file",
	"codex/acp":    "as over the CLI, Codex may apply its patch before the harness can read the file",
	"opencode/acp": "opencode acp names the file only once it has written it, and sends no diff content",
}

// KnownNoExitStatus lists where the agent's stream does not say that a
// shell command failed, so a failed command may end "ok" and still
// conform.
var KnownNoExitStatus = map[string]string{
	"gemini/cli": "Gemini's stream-json tool_result says success, with the command's output and no exit code",
	"gemini/acp": "gemini --acp completes the call with no content and no exit code",
}

// KnownNoHTTPStatus lists where the agent's error does not carry the
// HTTP status the model answered, so a fatal error of the right class
// with no http_status still conforms (exact or absent).
var KnownNoHTTPStatus = map[string]string{
	"opencode/acp": "opencode acp answers session/prompt with the provider's message and data {service, errorName}, no status",
}

// check fills r.Checks from what the run printed and left on disk.
func (r *Run) check(s scenario) {
	w := s.want
	for _, c := range []struct {
		name string
		fn   func() (string, string)
	}{
		{CheckInvariants, r.checkInvariants},
		{CheckStatus, func() (string, string) { return r.checkStatus(w) }},
		{CheckAnswer, func() (string, string) { return r.checkAnswer(w, s.before) }},
		{CheckTools, func() (string, string) { return r.checkTools(w.tools(r.Agent)) }},
		{CheckUsage, r.checkUsage},
		{CheckDiffs, func() (string, string) { return r.checkDiffs(w.edits, s.before) }},
		{CheckUnparsed, r.checkUnparsed},
		{CheckProcesses, r.checkProcesses},
	} {
		st, detail := c.fn()
		r.Checks = append(r.Checks, Check{Name: c.name, Status: st, Detail: detail})
	}
}

func pass() (string, string) { return Pass, "" }

func fail(format string, args ...any) (string, string) { return Fail, fmt.Sprintf(format, args...) }

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func (r *Run) checkInvariants() (string, string) {
	if len(r.Stdout) == 0 {
		return fail("no event stream (stderr: %s)", firstLine(r.Stderr))
	}
	if err := event.CheckNDJSON(r.Stdout); err != nil {
		return fail("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return pass()
}

func (r *Run) checkStatus(w want) (string, string) {
	if r.Exit != w.exit {
		return fail("exit status %d, want %d", r.Exit, w.exit)
	}
	if r.Result == nil {
		return fail("no result event")
	}
	if r.Result.Status != w.status {
		return fail("result status %s, want %s", r.Result.Status, w.status)
	}
	var fatal []*event.Error
	var codes []string
	for _, e := range r.Errors() {
		if e.Fatal {
			fatal = append(fatal, e)
		}
		codes = append(codes, e.Code)
	}
	switch {
	case w.fatal != "":
		if len(fatal) != 1 {
			return fail("%d fatal errors, want one of class %s", len(fatal), w.fatal)
		}
		f := fatal[0]
		why := KnownNoHTTPStatus[r.Agent+"/"+r.Protocol]
		switch {
		case f.Class != w.fatal:
			return fail("fatal error class %q, want %s", f.Class, w.fatal)
		case w.http == 0 || f.Status == w.http:
		case f.Status == 0 && why != "":
			return Pass, fmt.Sprintf("no http_status (%s)", why)
		default:
			return fail("fatal error http_status %d, want %d", f.Status, w.http)
		}
	case w.code != "" && !slices.Contains(codes, w.code):
		return fail("error codes %v, want %s among them", codes, w.code)
	case w.status == event.ResultSuccess && len(fatal) > 0:
		return fail("a fatal error (%s) in a successful run", fatal[0].Code)
	}
	return pass()
}

// checkAnswer holds result.text to the script's answer, and the whole
// work directory to the files the scenario's tools write: every file the
// run left (before: the files it started with) is the scenario's, none
// is missing, none holds anything else.
func (r *Run) checkAnswer(w want, before map[string]string) (string, string) {
	if r.Result == nil {
		return fail("no result event")
	}
	if r.Result.Text != w.text {
		return fail("result text %q, want %q", r.Result.Text, w.text)
	}
	left, err := r.leftFiles()
	if err != nil {
		return fail("%v", err)
	}
	want := map[string]file{}
	for p, text := range before {
		want[p] = file{data: text}
	}
	for p, text := range w.files {
		want[p] = file{data: text}
	}
	switch p, d := difference(left, want); d {
	case added:
		return fail("%s: the run left %s, which no tool of the scenario writes", p, left[p])
	case removed:
		return fail("%s: the run did not leave it", p)
	case changed:
		return fail("%s holds %s, want %s", p, left[p], want[p])
	}
	return pass()
}

func (r *Run) checkTools(want []tool) (string, string) {
	ends := r.ToolEnds()
	if len(ends) != len(want) {
		var names []string
		for _, e := range ends {
			names = append(names, e.Name+"["+string(e.Kind)+"]")
		}
		return fail("%d tool calls %v, want %d", len(ends), names, len(want))
	}
	note := ""
	for i, e := range ends {
		t := want[i]
		switch {
		case !slices.Contains(t.kinds, e.Kind):
			return fail("%s: kind %s, want one of %v", e.Name, e.Kind, t.kinds)
		case e.Status == event.StatusOK && t.status == event.StatusError && KnownNoExitStatus[r.Agent+"/"+r.Protocol] != "":
			note = fmt.Sprintf("%s: status ok (%s)", e.Name, KnownNoExitStatus[r.Agent+"/"+r.Protocol])
		case e.Status != t.status:
			return fail("%s: status %s, want %s", e.Name, e.Status, t.status)
		case e.ExitCode != nil && *e.ExitCode != t.exit:
			return fail("%s: exit_code %d, want %d", e.Name, *e.ExitCode, t.exit)
		case t.path != "" && !slices.ContainsFunc(e.Paths, func(p string) bool { return filepath.Base(p) == t.path }):
			return fail("%s: paths %v, want %s among them", e.Name, e.Paths, t.path)
		}
	}
	return Pass, note
}

// served are the script's model calls that answered with usage: not an
// HTTP error, not a hang (its answer never ends). stalled is the input
// of a hang's call, which the model sent as the call began (Anthropic's
// message_start): an agent whose stream shows it (Claude Code) reports
// it when it is stopped mid-call, with no output (docs/events.md, usage).
func served(sc *mockmodel.Scenario) (calls []mockmodel.Usage, stalled int) {
	for _, t := range sc.Turns {
		switch {
		case t.Hang:
			stalled = t.Usage.InputTokens
		case !t.IsError():
			calls = append(calls, t.Usage)
		}
	}
	return calls, stalled
}

func input(u event.Usage) int64 { return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens }

// checkUsage holds the usage events to what the scripted model sent for
// each of its calls: every event is the final count of one model call, or
// of several consecutive ones where the agent reports usage per turn,
// never a snapshot taken mid-call; together they are every call of the
// script, and result.usage is their sum. Over ACP an agent may report no
// usage (exact or absent); over the CLI every agent reports it.
func (r *Run) checkUsage() (string, string) {
	if r.Result == nil || r.Script == nil {
		return fail("no result event")
	}
	var events []event.Usage
	for _, b := range r.bodies(event.TypeUsage) {
		events = append(events, *b.(*event.Usage))
	}
	total := r.Result.Usage
	total.CostUSD, total.CostEstimated = 0, false
	calls, stalled := served(r.Script)
	var sum event.Usage
	if n := len(events); n > 0 && stalled > 0 && input(events[n-1]) == int64(stalled) && events[n-1].OutputTokens == 0 {
		sum.Add(events[n-1]) // the stalled call's input, which its start gave
		events = events[:n-1]
		if len(calls) == 0 && len(events) == 0 {
			if sum.CostUSD, sum.CostEstimated = 0, false; sum != total {
				return fail("result.usage %+v is not the sum of the usage events %+v", total, sum)
			}
			return Pass, "the stalled call's input"
		}
	}
	if len(calls) == 0 || (r.Protocol == ACP && len(events) == 0 && total.IsZero()) {
		if len(events) > 0 || !total.IsZero() {
			return fail("usage %+v reported, but the model served none", total)
		}
		if len(calls) > 0 {
			return Pass, "not reported over ACP"
		}
		return pass()
	}
	next := 0 // the first call of the script not yet accounted for
	for _, u := range events {
		sum.Add(u)
		var want mockmodel.Usage
		for next < len(calls) && (int64(want.InputTokens) < input(u) || want.InputTokens == 0) {
			want.InputTokens += calls[next].InputTokens
			want.OutputTokens += calls[next].OutputTokens
			next++
		}
		if int64(want.InputTokens) != input(u) || int64(want.OutputTokens) != u.OutputTokens {
			return fail("usage event %d in/%d out, want %d/%d (the model calls up to %d of %d)",
				input(u), u.OutputTokens, want.InputTokens, want.OutputTokens, next, len(calls))
		}
	}
	if next != len(calls) {
		return fail("the usage events cover %d of the %d model calls", next, len(calls))
	}
	sum.CostUSD, sum.CostEstimated = 0, false
	if sum != total {
		return fail("result.usage %+v is not the sum of the usage events %+v", total, sum)
	}
	return pass()
}

// checkDiffs holds every file tool's diff to the real files: git apply
// takes the diffs, in order, on the run's directory as it was before
// (before: relative path -> content; a file not listed did not exist),
// and the directory comes out as the run left it, every file: none more,
// none less, none different. Where the run also made a shell call, what
// the command wrote no diff shows: only the files the diffs touch are
// held then.
func (r *Run) checkDiffs(edits bool, before map[string]string) (string, string) {
	var files []*event.ToolEnd
	for _, e := range r.ToolEnds() {
		if e.Kind == event.KindWrite || e.Kind == event.KindEdit || e.Kind == event.KindDelete {
			files = append(files, e)
		}
	}
	if len(files) == 0 {
		if edits {
			return fail("no file tool call")
		}
		return NA, ""
	}
	dir, err := os.MkdirTemp(r.Dir, "replay-")
	if err != nil {
		return fail("%v", err)
	}
	for p, text := range before {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
			return fail("%v", err)
		}
	}
	touched := map[string]bool{}
	for _, e := range files {
		if e.DiffSkipped != "" {
			why, known := KnownNoDiff[r.Agent+"/"+r.Protocol]
			if known && e.DiffSkipped == event.DiffSkippedUnknown {
				// What follows cannot be replayed without this diff.
				return Pass, fmt.Sprintf("%s: diff_skipped %s (%s)", e.Name, e.DiffSkipped, why)
			}
			return fail("%s: diff_skipped %s: a small text file's diff is never skipped", e.Name, e.DiffSkipped)
		}
		if e.Diff == "" {
			return fail("%s call %s has no diff", e.Name, e.CallID)
		}
		ps, err := event.ParsePatch(e.Diff)
		if err != nil {
			return fail("%s: %v", e.Name, err)
		}
		for _, p := range ps {
			for _, path := range []string{p.From, p.To} {
				switch {
				case path == "": // /dev/null
				case !filepath.IsLocal(path):
					return fail("%s: %s: diff headers must be relative to the run's cwd", e.Name, path)
				default:
					touched[filepath.ToSlash(filepath.Clean(path))] = true
				}
			}
		}
		cmd := exec.Command("git", "apply", "--verbose", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(e.Diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fail("git apply refused the diff of %s: %v: %s", e.Name, err, firstLine(string(out)))
		}
	}
	left, err := r.leftFiles()
	if err != nil {
		return fail("%v", err)
	}
	replayed, err := readFiles(dir)
	if err != nil {
		return fail("%v", err)
	}
	if r.ranShell() {
		// What a shell command wrote no diff shows: only the files the
		// diffs touch are theirs to give (checkAnswer holds the rest).
		for _, files := range []map[string]file{left, replayed} {
			maps.DeleteFunc(files, func(p string, _ file) bool { return !touched[p] })
		}
	}
	switch p, d := difference(left, replayed); d {
	case added:
		return fail("%s: the run left it, the diffs do not make it", p)
	case removed:
		return fail("%s: the run removed it, the diffs did not", p)
	case changed:
		return fail("%s after the diffs is not the file the run left", p)
	}
	return pass()
}

// ranShell reports whether the run made a shell tool call.
func (r *Run) ranShell() bool {
	return slices.ContainsFunc(r.ToolEnds(), func(e *event.ToolEnd) bool { return e.Kind == event.KindShell })
}

func (r *Run) checkUnparsed() (string, string) {
	if r.Result == nil {
		return fail("no result event")
	}
	var lines []string
	for _, b := range r.bodies(event.TypeWarning) {
		if w := b.(*event.Warning); w.Code == event.WarnUnparsedLine {
			lines = append(lines, w.Message)
		}
	}
	if n := r.Result.Stats.UnparsedLines; n > 0 || len(lines) > 0 {
		first := ""
		if len(lines) > 0 {
			first = ": " + lines[0]
		}
		return fail("%d unparsed lines%s", max(n, int64(len(lines))), first)
	}
	return pass()
}

// checkProcesses fails when a process of the run is still alive: one
// that carries the run's marker in its environment (every process the
// run started inherits it, wherever it moved its working directory), or,
// for one that emptied its environment, one whose working directory is in
// the run's: the agent, its node wrapper, or a tool command it started in
// a session of its own. A pass is looked at once more a moment later: a
// process in the middle of an exec has, for that moment, no environment
// to read (its old memory is gone, its new one not yet set up), and one
// that left the run's directory first (a daemon's cd /) was then missed.
func (r *Run) checkProcesses() (string, string) {
	st, detail := r.findProcess()
	if st == Pass {
		time.Sleep(execSettle)
		st, detail = r.findProcess()
	}
	return st, detail
}

// execSettle is longer than an exec takes, even on a loaded machine.
const execSettle = 50 * time.Millisecond

// findProcess is one look of checkProcesses at the processes.
func (r *Run) findProcess() (string, string) {
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !process.Alive(pid) {
			continue
		}
		cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd")
		if (r.marker != "" && process.EnvironHas(pid, r.marker)) || cwd == r.Workdir || strings.HasPrefix(cwd, r.Workdir+"/") {
			args, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			return fail("process %d (%s) of the run is still alive", pid, strings.ReplaceAll(strings.TrimSuffix(string(args), "\x00"), "\x00", " "))
		}
	}
	return pass()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
