package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/alecthomas/kong"
)

// Exit statuses of harness (spec/events.md), mapped from errors in one place.
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
	Parse    parseCmd    `cmd:"" help:"Normalize a captured native agent stream (a file or stdin) into the unified event stream."`
	List     listCmd     `cmd:"" help:"List the supported agents, installed or not."`
	Check    checkCmd    `cmd:"" help:"Check that an agent is installed and usable: binary, version, credentials, flags."`
	Models   modelsCmd   `cmd:"" help:"Model aliases, ids and prices."`
	Config   configCmd   `cmd:"" help:"Show, locate or create the configuration."`
	Sessions sessionsCmd `cmd:"" help:"Stored session logs: list, show, replay, reparse, export, prune."`
	Mock     mockCmd     `cmd:"" help:"Serve the scripted model on 127.0.0.1 (for pointing agents at by hand)."`
	Schema   schemaCmd   `cmd:"" help:"Print the JSON Schema of one event line."`
	MCP      mcpCmd      `cmd:"" name:"mcp" help:"Serve harness over MCP (stdio, or streamable HTTP on loopback) so agents can delegate to other agents."`
	ACP      acpCmd      `cmd:"" name:"acp" help:"Speak ACP on stdio as an agent: each prompt runs the chosen agent under harness supervision."`
	Bench    benchCmd    `cmd:"" help:"Run agents side by side on the same task and compare them."`
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
		kong.Vars{"version": "harness " + version},
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Bind(e),
	)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return exitUsage
	}
	ctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	return report(ctx.Run(), stderr)
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
// an agent printed.
func oneLine(s string) string {
	s = strings.TrimSpace(termSafe(s))
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
