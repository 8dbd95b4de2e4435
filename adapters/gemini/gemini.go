// Package gemini adapts Google's Gemini CLI run headless as
// `gemini --output-format stream-json`: the command line for a task, and a
// parser from its init/message/tool_use/tool_result/error/result lines to
// unified events.
package gemini

import (
	"errors"
	"fmt"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/registry"
)

// Agent is the Gemini CLI: who it is, how it is driven, and how --mock
// points it at the scripted model.
var Agent = adapters.Agent{
	Info: registry.AgentInfo{
		ID: "gemini", Display: "Gemini CLI",
		Aliases:       []string{"gemini-cli"},
		Binaries:      []string{"gemini"},
		NPMPackage:    "@google/gemini-cli",
		CredentialEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		Flags:         []string{"--prompt", "--output-format", "--model", "--yolo", "--approval-mode", "--resume"},
	},
	Driver: &Adapter{},
	Mock:   mock,
	ACP: &adapters.ACP{
		Command: []string{"gemini", "--acp"},
		Model:   func(m string) ([]string, []string) { return []string{"-m", m}, nil },
	},
}

// Adapter drives the Gemini CLI (Agent.Driver). The zero value is ready to
// use.
type Adapter struct{}

// NewParser returns a parser for one run.
func (*Adapter) NewParser() adapters.Parser { return newParser() }

// Errors for task options the Gemini CLI cannot honour from its command line.
var (
	ErrMaxTurns           = errors.New("gemini: no command-line max-turns option (only the model.maxSessionTurns setting in settings.json)")
	ErrSystemPrompt       = errors.New("gemini: the system prompt can only be replaced from a file (GEMINI_SYSTEM_MD=PATH)")
	ErrAppendSystemPrompt = errors.New("gemini: no option to append to the system prompt (use GEMINI.md context files)")
	ErrPromptTooLong      = fmt.Errorf("gemini: the prompt is over %d MiB, the most the CLI reads from stdin (it cuts the rest)", stdinPromptMax>>20)
)

// stdinPromptMax is what the Gemini CLI reads of its stdin; it drops the
// rest with only a debug-log warning.
const stdinPromptMax = 8 << 20

// Command builds `gemini --output-format stream-json … --prompt=<prompt>`.
//
// Every valued option uses the `--flag=value` form: yargs then takes the
// value verbatim, so a prompt (or model, or session id) starting with "-" is
// never read as a flag.
//
// full-access maps to --approval-mode=yolo (--yolo is deprecated and cannot
// be combined with --approval-mode); read-only to --approval-mode=plan, the
// CLI's read-only mode (the "default" mode asks for approval, which a
// headless run turns into a denial of every write and shell call — plan
// says what is meant). --skip-trust is always passed: in a folder the user
// never trusted, a headless run otherwise exits 55 before any output, and
// yolo is silently downgraded to default; harness was told to run there.
// Gemini has no cwd flag (the caller sets the process's directory), no
// max-turns flag, and takes a replacement system prompt only from a file,
// so MaxTurns, SystemPrompt and AppendSystemPrompt are errors. It always
// streams deltas and has no flag to stop, so NoPartial changes nothing.
//
// A prompt longer than adapters.ArgPromptMax goes on stdin with no
// --prompt: a headless run (stdin not a terminal) takes stdin as its
// input. The CLI reads at most 8 MiB there, so a longer prompt is
// ErrPromptTooLong.
func (*Adapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	argv := []string{binary, "--output-format", "stream-json"}
	if t.Model != "" {
		argv = append(argv, "--model="+t.Model)
	}
	perm, err := t.PermissionArgs("gemini", []string{"--approval-mode=yolo"}, []string{"--approval-mode=plan"})
	if err != nil {
		return adapters.Command{}, err
	}
	argv = append(argv, perm...)
	switch {
	case t.MaxTurns != 0:
		return adapters.Command{}, ErrMaxTurns
	case t.SystemPrompt != "":
		return adapters.Command{}, ErrSystemPrompt
	case t.AppendSystemPrompt != "":
		return adapters.Command{}, ErrAppendSystemPrompt
	}
	argv = append(argv, "--skip-trust")
	if t.Resume != "" {
		argv = append(argv, "--resume="+t.Resume)
	}
	argv = append(argv, t.ExtraArgs...)
	if len(t.Prompt) > adapters.ArgPromptMax {
		if len(t.Prompt) > stdinPromptMax {
			return adapters.Command{}, ErrPromptTooLong
		}
		return adapters.Command{Argv: argv, Stdin: t.Prompt, PromptIndex: -1}, nil
	}
	argv = append(argv, "--prompt="+t.Prompt)
	return adapters.Command{Argv: argv, PromptIndex: len(argv) - 1}, nil
}
