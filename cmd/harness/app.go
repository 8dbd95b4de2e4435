package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/alecthomas/kong"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/conform"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/ansi"
	"github.com/agentharness/harness/mockmodel"
)

// Exit statuses of harness (docs/events.md), mapped from errors in one place.
const (
	exitOK          = 0
	exitAgentFailed = 1
	exitUsage       = 2
	exitTimeout     = 124
	exitNotFound    = 127
	exitInterrupted = 130
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// cli is the command tree.
type cli struct {
	Version kong.VersionFlag `help:"Print the version and exit." short:"V"`

	Run      runCmd      `cmd:"" help:"Run an agent on a task and print the unified event stream."`
	Session  sessionCmd  `cmd:"" help:"Hold a live session: one agent process, a turn per prompt read on stdin (NDJSON commands), the unified stream on stdout."`
	Parse    parseCmd    `cmd:"" help:"Normalize a captured native agent stream (a file or stdin) into the unified event stream."`
	List     listCmd     `cmd:"" help:"List the supported agents, installed or not."`
	Check    checkCmd    `cmd:"" help:"Check that an agent is installed and usable: binary, version, credentials, flags."`
	Conform  conformCmd  `cmd:"" help:"Play the built-in scripted scenarios against agents as installed and check every stream exactly."`
	Models   modelsCmd   `cmd:"" help:"Model aliases, ids and prices."`
	Config   configCmd   `cmd:"" help:"Show, locate or create the configuration."`
	Sessions sessionsCmd `cmd:"" help:"Stored session logs: list, show, replay, reparse, export, prune."`
	Mock     mockCmd     `cmd:"" help:"Serve the scripted model on 127.0.0.1 (for pointing agents at by hand)."`
	Schema   schemaCmd   `cmd:"" help:"Print the JSON Schema of one event line."`
	MCP      mcpCmd      `cmd:"" name:"mcp" help:"Serve harness over MCP (stdio, or streamable HTTP on loopback) so agents can delegate to other agents."`
	ACP      acpCmd      `cmd:"" name:"acp" help:"Speak ACP on stdio as an agent: each prompt runs the chosen agent under harness supervision."`
	Bench    benchCmd    `cmd:"" help:"Run agents side by side on the same task and compare them."`
	Serve    serveCmd    `cmd:"" help:"Serve the HTTP API and live web view of runs and bench reports."`
	Vers     versionCmd  `cmd:"" name:"version" help:"Print the version."`
}

// env is what commands get from the outside world, bound so tests can run
// every command in-process.
type env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// exitError carries an exit status; its message, when not empty, is the one
// line printed on stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

func withStatus(code int, err error) error { return &exitError{code: code, err: err} }

func usageErrorf(format string, args ...any) error {
	return withStatus(exitUsage, fmt.Errorf(format, args...))
}

// kongExit is panicked by kong's exit hook and recovered in run, so --help
// and parse errors return a status instead of ending the test process.
type kongExit struct{ code int }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	return runGrammar(grammar, args, stdin, stdout, stderr)
}

func runGrammar(grammar func(*cli, []string) any, args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	e := &env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
	var c cli
	defer func() {
		if r := recover(); r != nil {
			ke, ok := r.(kongExit)
			if !ok {
				panic(r)
			}
			status = ke.code
		}
	}()
	parser, err := kong.New(grammar(&c, args),
		kong.Name("harness"),
		kong.Description("Run any coding agent headless, supervised, with one unified NDJSON event stream."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(kongExit{code}) }),
		parseVars(args),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(listBranchCommands),
		kong.Bind(e),
	)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return exitUsage
	}
	ctx, err := parser.Parse(args)
	if err == nil {
		err = refuseEmpty(ctx)
	}
	if err != nil {
		fmt.Fprintf(stderr, "harness: %s\n", oneLine(enumValues(err.Error())))
		return exitUsage
	}
	return report(ctx.Run(), stderr)
}

// enumValues is kong's message of a flag given a value not in its enum
// ("--format must be one of "ndjson","text","" but got "x"") without the
// empty value: the flags declared enum:"a,b," take "" only as "not
// given", so that their default comes from the configuration, and it is
// no value to offer. Any other message is returned as it is.
func enumValues(msg string) string {
	const oneOf, butGot = " must be one of ", " but got "
	flag, rest, ok := strings.Cut(msg, oneOf)
	if !ok {
		return msg
	}
	// The values are each %q: the first butGot is after them.
	list, got, ok := strings.Cut(rest, butGot)
	if !ok {
		return msg
	}
	var values []string
	for list != "" {
		q, err := strconv.QuotedPrefix(list)
		if err != nil {
			return msg
		}
		if q != `""` {
			values = append(values, q)
		}
		list = strings.TrimPrefix(list[len(q):], ",")
	}
	return flag + oneOf + strings.Join(values, ",") + butGot + got
}

// refuseEmpty refuses a flag tagged notempty given an empty value on the
// command line (its last value, as kong keeps it). Such a flag's "" means
// "not given", and taken so it was a danger: --mock "" (a variable left
// unset) ran the real agent against its real service, --permissions ""
// a run meant to be read-only with full access. The tag's value says
// what to give instead; an enum flag's message is kong's.
func refuseEmpty(ctx *kong.Context) error {
	for _, p := range ctx.Path {
		f := p.Flag
		if f == nil || !f.Tag.Has("notempty") {
			continue
		}
		if v := reflect.Indirect(f.Target); v.Kind() != reflect.String || v.String() != "" {
			continue
		}
		if f.Enum != "" { // enumValues drops the "" of the values
			values := f.EnumSlice()
			for i, v := range values {
				values[i] = strconv.Quote(v)
			}
			return fmt.Errorf("--%s must be one of %s but got \"\"", f.Name, strings.Join(values, ","))
		}
		return fmt.Errorf("--%s: an empty value: %s", f.Name, f.Tag.Get("notempty"))
	}
	return nil
}

// grammar returns what kong builds its parser from: c itself, or, when
// args starts with the name of a command, a struct of c's flags and that
// command alone. kong reads every tag of every command by reflection when
// it builds a parser (about 1 ms, most of a run's start-up); one
// command's tags are a fraction of that. What is parsed and run, and
// every message, are the same.
func grammar(c *cli, args []string) any {
	if len(args) == 0 {
		return c
	}
	t := reflect.TypeOf(*c)
	var fields []reflect.StructField
	// `harness --version` alone needs the flags and no command.
	found := len(args) == 1 && (args[0] == "--version" || args[0] == "-V")
	for i := range t.NumField() {
		f := t.Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); isCmd {
			name := f.Tag.Get("name")
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if name != args[0] {
				continue
			}
			found = true
		}
		fields = append(fields, f)
	}
	if !found {
		return c
	}
	return reflect.New(reflect.StructOf(fields)).Interface()
}

// report maps a command's error to its exit status, printing its one line.
func report(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if onBrokenPipe != nil {
		onBrokenPipe(err) // a write to a closed stdout or stderr: dies of SIGPIPE, as a filter does
	}
	code := exitAgentFailed
	var coder interface{ ExitCode() int }
	if errors.As(err, &coder) {
		code = coder.ExitCode()
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "harness: %s\n", oneLine(msg))
	}
	return code
}

// oneLine is s on one line, fit for a terminal: an error may quote what
// an agent printed. A value it names may be as long as a file or a flag
// (a 200 KB agent in harness.toml): a quoted string, or a word, of over
// maxShown bytes shows only its start, followed by "…".
func oneLine(s string) string {
	s = strings.TrimSpace(ansi.TermSafe(cutQuoted(s)))
	words := strings.Fields(strings.ReplaceAll(s, "\n", "; "))
	for i, w := range words {
		if c, cut := event.Cut(w, maxShown); cut {
			words[i] = c + "…"
			if strings.ContainsAny(w[len(w)-1:], ":;,)") { // "stat PATH: why"
				words[i] += w[len(w)-1:]
			}
		}
	}
	return strings.Join(words, " ")
}

// maxShown caps a value shown in a line of oneLine's; maxQuoted the
// value of a quoted string, so that, quoted again (each byte at most
// four, as \x01) and cut, it is not cut again as a word.
const (
	maxShown  = 1024
	maxQuoted = (maxShown - len(`""…`)) / 4
)

// cutQuoted is s with every Go-quoted string (%q) whose value is over
// maxQuoted bytes cut to its start, quoted again, with "…" before its
// closing quote.
func cutQuoted(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		q, err := strconv.QuotedPrefix(s)
		if err != nil { // a lone quote
			q = s[:1]
		}
		s = s[len(q):]
		if v, _ := strconv.Unquote(q); len(v) > maxQuoted {
			v, _ = event.Cut(v, maxQuoted)
			q = strings.TrimSuffix(strconv.Quote(v), `"`) + `…"`
		}
		b.WriteString(q)
	}
	b.WriteString(s)
	return b.String()
}

// listBranchCommands is kong's help with two additions: kong lists only the
// leaves of the command tree, so a command that runs by itself and also has
// sub-commands (bench, with compare, merge and k8s-job) would be missing
// from the top-level list. It gets its own line before its sub-commands,
// and its usage line shows the sub-command as optional.
func listBranchCommands(options kong.HelpOptions, ctx *kong.Context) error {
	var buf bytes.Buffer
	out := ctx.Stdout
	ctx.Stdout = &buf
	err := kong.DefaultHelpPrinter(options, ctx)
	ctx.Stdout = out
	text := buf.String()
	if sel := ctx.Selected(); sel != nil && len(sel.Children) > 0 && (len(sel.Flags) > 0 || sel.DefaultCmd != nil) {
		// kong's usage line asks for a sub-command under every branch;
		// this one runs without (bench itself, or a default such as
		// 'models list').
		usage, rest, _ := strings.Cut(text, "\n")
		text = strings.Replace(usage, " <command>", " [<command>]", 1) + "\n" + rest
	}
	if ctx.Selected() == nil {
		for _, n := range ctx.Model.Children {
			// A branch with flags of its own runs by itself (models,
			// config and sessions have none: they only group).
			if len(n.Children) == 0 || len(n.Flags) == 0 || n.Hidden {
				continue
			}
			first := "\n  " + n.Name + " " + n.Children[0].Name + " "
			i := strings.Index(text, first)
			if i < 0 {
				continue
			}
			rest := text[i+len(first):]
			column := len(first) - 1 + len(rest) - len(strings.TrimLeft(rest, " "))
			line := "\n  " + n.Name + strings.Repeat(" ", column-len(n.Name)-2) + n.Help
			text = text[:i] + line + text[i:]
		}
	}
	_, werr := io.WriteString(out, text)
	return cmp.Or(err, werr)
}

// helpVars are the variables the help strings use: the version, the
// agents as registered, those that can hold a live session and the ACP
// commands of those that have one, conform's scenarios and the scripted
// model's; and the protocol enums.
func helpVars() kong.Vars {
	var acp []string
	for _, a := range harness.Agents() {
		if a.ACP != nil {
			acp = append(acp, strings.Join(a.ACP.Command, " "))
		}
	}
	v := protocolVars()
	v["version"] = "harness " + version
	v["agents"] = strings.Join(harness.AgentNames(), ", ")
	v["liveagents"] = strings.Join(harness.LiveAgents(), ", ")
	v["acpcommands"] = strings.Join(acp, ", ")
	v["scenarios"] = strings.Join(conform.Scenarios(), ", ")
	v["mockscenarios"] = strings.Join(mockmodel.BuiltinNames(), ", ")
	return v
}

// protocolVars are the --protocol flags' enums, from the protocol table
// (harness.Protocols), so that a protocol is one row of it: protocols
// all of them (a one-prompt run and parse take each), liveprotocols those
// that hold a live session, anyprotocols those any agent may speak.
func protocolVars() kong.Vars {
	var all, live, anyAgent []string
	for _, p := range harness.Protocols() {
		all = append(all, p.Name)
		if p.Live {
			live = append(live, p.Name)
		}
		if p.Owner == "" {
			anyAgent = append(anyAgent, p.Name)
		}
	}
	return kong.Vars{"protocols": strings.Join(all, ","), "liveprotocols": strings.Join(live, ","),
		"anyprotocols": strings.Join(anyAgent, ",")}
}

// parseVars is helpVars when args may ask for help (-h, --help), else
// the same variables with only the version and the enums set: the others appear only
// in help text, and kong interpolates every variable once per flag as it
// builds the parser (a regexp pass over each value), which for run was
// about half of the parser's construction.
func parseVars(args []string) kong.Vars {
	for _, a := range args {
		// Over-matching (a value such as -p "-h") only costs the time.
		if a == "--help" || strings.HasPrefix(a, "--help=") || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'h') {
			return helpVars()
		}
	}
	v := protocolVars() // enums: parsing needs them
	v["version"] = "harness " + version
	for _, k := range []string{"agents", "liveagents", "acpcommands", "scenarios", "mockscenarios"} {
		v[k] = ""
	}
	return v
}

// writeJSON prints v as indented JSON, the machine output of the
// commands that have one.
func writeJSON(e *env, v any) error {
	enc := json.NewEncoder(e.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// binaryFlag is --binary of the commands that start an agent.
type binaryFlag struct {
	Binary string `help:"Path of the agent's executable."`
}

// jsonFlag is --json of the commands that print a list.
type jsonFlag struct {
	JSON bool `help:"Print JSON."`
}

// printSettingsList is printList of what items reads from the settings
// of the current directory: the listings of config and models.
func printSettingsList[T any](e *env, asJSON bool, items func(*settings) []T, header string, row func(T) string) error {
	s, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	return printList(e, asJSON, items(s), header, row)
}

// printList prints items as JSON (--json), else as a table: header, then
// one row per item, its cells separated by tabs.
func printList[T any](e *env, asJSON bool, items []T, header string, row func(T) string) error {
	if asJSON {
		return writeJSON(e, items)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, it := range items {
		fmt.Fprintln(tw, row(it))
	}
	return tw.Flush()
}
