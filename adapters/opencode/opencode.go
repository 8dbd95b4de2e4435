// Package opencode adapts OpenCode (opencode run --format json): it builds
// the command line for a task and turns OpenCode's JSON lines — whole parts,
// one tool_use per finished call, one step_finish per model call — into
// unified events.
package opencode

import (
	"errors"
	"fmt"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/registry"
)

// Agent is OpenCode: who it is, how it is driven, and how --mock points it
// at the scripted model.
var Agent = adapters.Agent{
	Info: registry.AgentInfo{
		ID: "opencode", Display: "OpenCode",
		Aliases:    []string{"open-code"},
		Binaries:   []string{"opencode"},
		NPMPackage: "opencode-ai",
		CredentialEnv: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
			"GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY"},
		Flags:       []string{"run", "--format", "--model", "--session"},
		ModelPrefix: true,
	},
	Driver: &Adapter{},
	Mock:   mock,
	// OpenCode (a Bun executable) writes its embedded native library,
	// 5.4 MB, to the temporary directory at every start under a new
	// name (.<hex>-00000000.so), and an opencode/ directory, and never
	// removes them.
	PrivateTmp: true,
	// OpenCode's ACP mode takes the model from its config only.
	ACP: &adapters.ACP{Command: []string{"opencode", "acp"},
		// Seen with opencode 1.18.33 and the scripted model: by its default
		// rules it never asks; told to ask (OPENCODE_PERMISSION), it writes
		// an approved file through the client's fs/write_text_file, which
		// harness does not advertise.
		CannotAsk: "OpenCode over ACP asks for no edit by its default rules, and once made to ask writes approved files through the client's fs/write_text_file, which harness does not serve"},
}

// Adapter drives OpenCode (Agent.Driver). The zero value is ready to use;
// it holds no state and is safe for concurrent use.
type Adapter struct{}

// NewParser returns a parser for one run.
func (*Adapter) NewParser() adapters.Parser { return newParser() }

// Errors for task options opencode run has no flag for.
var (
	ErrMaxTurns     = errors.New("opencode: opencode run has no max-turns option (set agent steps in opencode.json)")
	ErrSystemPrompt = errors.New("opencode: opencode run has no system-prompt option (use an agent's prompt in opencode.json or AGENTS.md)")
)

// readOnlyPermission is merged by OpenCode over its configured permission
// rules (OPENCODE_PERMISSION is applied last, so it wins): file changes and
// shell commands are denied, reads, searches and fetches keep their rules.
// Whatever still asks is rejected, since read-only runs do not pass
// --dangerously-skip-permissions.
const readOnlyPermission = `{"edit":"deny","bash":"deny"}`

// Command builds
//
//	BINARY run --format json [-m PROVIDER/MODEL] [-s SESSION] [--thinking]
//	  [--dir CWD] [--dangerously-skip-permissions] [EXTRA…] -- PROMPT
//
// full-access passes --dangerously-skip-permissions, which auto-approves
// every permission request not explicitly denied; it is accepted by every
// build since it appeared (its newer spellings --auto and --yolo are not
// known to older ones). read-only sets OPENCODE_PERMISSION instead: headless
// runs reject whatever asks, and edits and shell commands are denied.
// --thinking makes OpenCode print reasoning parts. The prompt follows "--":
// yargs puts what comes after it in "--", which run.ts joins to the message,
// so a prompt starting with "-" stays a prompt. Stdin stays empty: run.ts
// reads a non-TTY stdin to EOF and appends it to the message — which is
// how a prompt longer than adapters.ArgPromptMax is given, with no message
// argument.
func (a *Adapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	if t.MaxTurns != 0 {
		return adapters.Command{}, ErrMaxTurns
	}
	if t.SystemPrompt != "" || t.AppendSystemPrompt != "" {
		return adapters.Command{}, ErrSystemPrompt
	}
	argv := []string{binary, "run", "--format", "json"}
	if t.Model != "" {
		argv = append(argv, "-m", t.Model)
	}
	if t.Resume != "" {
		argv = append(argv, "-s", t.Resume)
	}
	argv = append(argv, "--thinking")
	if t.Cwd != "" {
		argv = append(argv, "--dir", t.Cwd)
	}
	var env []string
	switch t.Permissions {
	case "", adapters.FullAccess:
		argv = append(argv, "--dangerously-skip-permissions")
	case adapters.ReadOnly:
		env = append(env, "OPENCODE_PERMISSION="+readOnlyPermission)
	default:
		return adapters.Command{}, fmt.Errorf("opencode: unknown permission mode %q", t.Permissions)
	}
	argv = append(argv, t.ExtraArgs...)
	return adapters.PromptLast(argv, env, t.Prompt), nil
}
