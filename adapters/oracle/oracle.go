// Package oracle holds two built-in agents that call no model: oracle,
// which runs a task's reference solution (a Harbor task's
// solution/solve.sh), and nop, which does nothing. A suite's sanity check
// is oracle scoring 1 on every task and nop scoring 0 (docs/bench.md).
//
// Both are ordinary agents for the harness: a process under supervision
// (watchdogs, kill, session log) whose output a parser turns into events.
// The oracle's process is a small bash wrapper that prints a start marker,
// runs the script with stderr merged into stdout, and prints an exit
// marker: the run's stream is one shell tool call (tool_start, tool_end
// with the script's exit code and output) and a result.
package oracle

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/registry"
)

// Agent runs the script given as its one extra argument (after -- on
// the command line; bench gives a Harbor task's solution/solve.sh).
var Agent = builtin("oracle", "Oracle (reference solution)", "bash", oracleDriver{})

// Nop does nothing and succeeds.
var Nop = builtin("nop", "Nop (does nothing)", "sh", nopDriver{})

// builtin declares an agent that needs no credentials nor model.
func builtin(id, display, binary string, d adapters.Driver) adapters.Agent {
	return adapters.Agent{Info: registry.AgentInfo{ID: id, Display: display, Binaries: []string{binary}}, Driver: d}
}

// The markers start with ASCII RS so a script's own output does not
// pass for one by accident.
const (
	startMarker = "\x1eharness-oracle start "
	exitMarker  = "\x1eharness-oracle exit "
	nopMarker   = "\x1eharness-nop"
)

// wrapper runs $1 as Harbor's oracle does (made executable, run by its
// own interpreter line, stderr with stdout) between the markers, and
// exits with its status.
const wrapper = `printf '\036harness-oracle start %s\n' "$1"
chmod +x "$1" 2>/dev/null
if [ -x "$1" ]; then "$1" </dev/null 2>&1; else bash "$1" </dev/null 2>&1; fi
c=$?
printf '\036harness-oracle exit %d\n' "$c"
exit "$c"`

// ErrNoScript is the error of an oracle task without a script.
var ErrNoScript = errors.New("give the solution script as the one argument after -- (bench gives a Harbor task's solution/solve.sh)")

// Options that an agent of no model cannot honour: a run given one would
// silently do something else (a script run read-only with full access).
var (
	ErrReadOnly     = errors.New("runs with full access: it has no read-only mode")
	ErrMaxTurns     = errors.New("calls no model: it has no max-turns option")
	ErrSystemPrompt = errors.New("calls no model: it has no system prompt")
	ErrResume       = errors.New("has no session to resume")
)

// refuse returns the error of the first option of t that agent, calling
// no model, cannot honour, nil when t asks for none.
func refuse(agent string, t adapters.Task) error {
	if _, err := t.PermissionArgs(agent, nil, nil); err != nil {
		return err
	}
	switch {
	case t.Permissions == adapters.ReadOnly:
		return ErrReadOnly
	case t.MaxTurns > 0:
		return ErrMaxTurns
	case t.SystemPrompt != "" || t.AppendSystemPrompt != "":
		return ErrSystemPrompt
	case t.Resume != "":
		return ErrResume
	}
	return nil
}

type oracleDriver struct{}

func (oracleDriver) Command(binary string, t adapters.Task) (adapters.Command, error) {
	if err := refuse("oracle", t); err != nil {
		return adapters.Command{}, err
	}
	if len(t.ExtraArgs) != 1 || t.ExtraArgs[0] == "" {
		return adapters.Command{}, ErrNoScript
	}
	return adapters.Command{Argv: []string{binary, "-c", wrapper, "oracle", t.ExtraArgs[0]},
		Env: []string{"DEBIAN_FRONTEND=noninteractive"}, PromptIndex: -1}, nil
}

func (oracleDriver) NewParser() adapters.Parser { return &parser{} }

// outputMax is how much of the script's output the tool_end keeps: the
// tail, where a script says why it failed.
const outputMax = 64 << 10

type parser struct {
	started, ended bool
	out            []byte
	cut            bool
}

const callID = "oracle-1"

func (p *parser) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	s := string(line)
	switch {
	case !p.started && strings.HasPrefix(s, startMarker):
		p.started = true
		cmd := strings.TrimPrefix(s, startMarker)
		input, _ := json.Marshal(map[string]string{"command": cmd})
		return append(dst, &event.ToolStart{CallID: callID, Name: "bash", Kind: event.KindShell,
			Input: input, Command: cmd}), true
	case p.started && !p.ended && strings.HasPrefix(s, exitMarker):
		code, err := strconv.Atoi(strings.TrimPrefix(s, exitMarker))
		if err != nil {
			break
		}
		p.ended = true
		status, res := event.StatusOK, event.ResultSuccess
		if code != 0 {
			status, res = event.StatusError, event.ResultError
		}
		text := "the solution exited with status " + strconv.Itoa(code)
		return append(dst, &event.ToolEnd{CallID: callID, Name: "bash", Kind: event.KindShell, Status: status,
			Output: string(p.out), OutputTruncated: p.cut, ExitCode: &code},
			&event.Result{Status: res, Text: text, ExitCode: &code}), true
	}
	if p.started && !p.ended {
		p.out = append(p.out, line...)
		p.out = append(p.out, '\n')
		if over := len(p.out) - outputMax; over > 0 {
			p.out = append(p.out[:0], p.out[over:]...)
			p.cut = true
		}
		return dst, true
	}
	return dst, false
}

func (p *parser) Flush(dst []event.Body) []event.Body { return dst }

type nopDriver struct{}

func (nopDriver) Command(binary string, t adapters.Task) (adapters.Command, error) {
	if err := refuse("nop", t); err != nil {
		return adapters.Command{}, err
	}
	return adapters.Command{Argv: []string{binary, "-c", `printf '\036harness-nop\n'`}, PromptIndex: -1}, nil
}

func (nopDriver) NewParser() adapters.Parser { return nopParser{} }

type nopParser struct{}

func (nopParser) Parse(dst []event.Body, line []byte) ([]event.Body, bool) {
	if string(line) == nopMarker {
		return append(dst, &event.Result{Status: event.ResultSuccess, Text: "nop: did nothing"}), true
	}
	return dst, false
}

func (nopParser) Flush(dst []event.Body) []event.Body { return dst }
