// Package codex adapts OpenAI's Codex CLI run as `codex exec --json`: the
// command line for a task, and a parser from its thread/turn/item JSONL
// stream (codex ≥ 0.44) to unified events. The legacy `{"id","msg"}` stream
// of codex ≤ 0.43 and the transitional `session.created` stream of 0.42 are
// recognised and reported as a parse error, never parsed as if they were
// the current schema.
package codex

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/registry"
)

// Agent is the Codex CLI: who it is, how it is driven, and how --mock
// points it at the scripted model.
var Agent = adapters.Agent{
	Info: registry.AgentInfo{
		ID: "codex", Display: "OpenAI Codex CLI",
		Aliases: []string{"openai-codex"},
		// The npm launcher installs `codex`, which starts the native binary itself.
		Binaries:      []string{"codex"},
		NPMPackage:    "@openai/codex",
		CredentialEnv: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		Flags: []string{"exec", "--json", "--skip-git-repo-check", "--model", "--sandbox",
			"--dangerously-bypass-approvals-and-sandbox", "--cd"},
	},
	Driver: &Adapter{},
	Mock:   mock,
	ACP: &adapters.ACP{
		Command: []string{"codex-acp"}, // @agentclientprotocol/codex-acp
		Model:   func(m string) ([]string, []string) { return []string{"-c", "model=" + strconv.Quote(m)}, nil },
	},
}

// Adapter drives the Codex CLI (Agent.Driver). The zero value is ready to
// use.
type Adapter struct{}

// NewParser returns a parser for one run.
func (*Adapter) NewParser() adapters.Parser { return newParser() }

// Errors for task options the Codex CLI cannot honour.
var (
	ErrMaxTurns     = errors.New("codex: exec has no max-turns option")
	ErrSystemPrompt = errors.New("codex: the system prompt can only be replaced from a file (-c model_instructions_file=PATH in ExtraArgs); use AppendSystemPrompt for developer instructions")
)

// Command builds `codex exec --json …`. The options all belong to exec and
// come before the optional `resume <id>` subcommand (only -m and the bypass
// flag are global in clap, so -s, -C and -c must precede it); the prompt
// comes last, after `--`, so that clap takes a prompt starting with "-" or
// equal to "resume" as the positional prompt.
//
// full-access maps to --dangerously-bypass-approvals-and-sandbox (exec never
// asks for approval; `--full-auto` was removed in 0.169); read-only to
// `-s read-only`. AppendSystemPrompt becomes the developer_instructions
// config key, sent as a developer-role message. Codex has no max-turns
// option and replaces its system prompt only from a file, so MaxTurns and
// SystemPrompt are errors. Codex never streams text deltas, so NoPartial
// changes nothing. A prompt longer than adapters.ArgPromptMax goes on
// stdin, the prompt argument being "-" (exec reads the prompt from stdin
// then).
func (*Adapter) Command(binary string, t adapters.Task) (adapters.Command, error) {
	argv := []string{binary, "exec", "--json", "--skip-git-repo-check"}
	if t.Model != "" {
		argv = append(argv, "-m", t.Model)
	}
	if t.Cwd != "" {
		argv = append(argv, "-C", t.Cwd)
	}
	perm, err := t.PermissionArgs("codex", []string{"--dangerously-bypass-approvals-and-sandbox"}, []string{"-s", "read-only"})
	if err != nil {
		return adapters.Command{}, err
	}
	argv = append(argv, perm...)
	if t.MaxTurns != 0 {
		return adapters.Command{}, ErrMaxTurns
	}
	if t.SystemPrompt != "" {
		return adapters.Command{}, ErrSystemPrompt
	}
	if t.AppendSystemPrompt != "" {
		argv = append(argv, "-c", "developer_instructions="+tomlString(t.AppendSystemPrompt))
	}
	argv = append(argv, t.ExtraArgs...)
	if t.Resume != "" {
		argv = append(argv, "resume", t.Resume)
	}
	return adapters.PromptLast(argv, nil, t.Prompt, "--", "-"), nil
}

// tomlString quotes s as a TOML basic string: codex parses a -c value as
// TOML, and only falls back to a raw string when that fails, so a value
// such as `true` or `[1]` must be quoted to stay text.
func tomlString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
