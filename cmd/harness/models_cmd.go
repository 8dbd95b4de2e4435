package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/ansi"
	"github.com/agentharness/harness/registry"
)

type modelsCmd struct {
	List    modelsListCmd    `cmd:"" default:"1" help:"List model aliases and the id each agent uses."`
	Resolve modelsResolveCmd `cmd:"" help:"Print the model id an agent gets for an alias."`
	Prices  modelsPricesCmd  `cmd:"" help:"List per-model prices (USD per million tokens) used to estimate costs."`
	Update  modelsUpdateCmd  `cmd:"" help:"Refresh the user model cache from a file or URL."`
}

type modelsListCmd struct {
	jsonFlag `embed:""`
}

func (c *modelsListCmd) Run(e *env) error {
	list := func(s *settings) []registry.Entry { return s.models.List() }
	return printSettingsList(e, c.JSON, list, "ALIAS\tAGENT MODEL IDS", func(en registry.Entry) string {
		var ids []string
		for _, agent := range slices.Sorted(maps.Keys(en.IDs)) {
			ids = append(ids, agent+"="+cell(en.IDs[agent]))
		}
		return cell(en.Alias) + "\t" + strings.Join(ids, " ")
	})
}

type modelsResolveCmd struct {
	Alias string `arg:"" help:"Model alias or id."`
	Agent string `short:"a" required:"" help:"Agent the model is for."`
}

func (c *modelsResolveCmd) Run(e *env) error {
	a, err := harness.Adapter(c.Agent)
	if err != nil {
		return withStatus(exitUsage, err)
	}
	if strings.TrimSpace(c.Alias) == "" {
		// An empty id would print an empty line and succeed: a script
		// would pass --model "" on.
		return usageErrorf("models resolve: the alias is empty: give a model alias or id")
	}
	s, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	id, _ := s.models.Resolve(c.Alias, a.Name())
	_, err = fmt.Fprintln(e.Stdout, printableID(id))
	return err
}

// printableID is id as resolve prints it: as it is when every character
// prints, else Go-quoted. An id comes from files (a downloaded models
// table, harness.toml) or is the alias given, and an escape sequence in
// one must not reach the terminal; the quotes show a script that the id
// is not one to pass on as it is.
func printableID(id string) string {
	if !utf8.ValidString(id) || strings.IndexFunc(id, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return strconv.Quote(id)
	}
	return id
}

type modelsPricesCmd struct {
	jsonFlag `embed:""`
}

func (c *modelsPricesCmd) Run(e *env) error {
	prices := func(s *settings) []registry.PricedModel { return s.models.Prices() }
	return printSettingsList(e, c.JSON, prices, "MODEL\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE", func(p registry.PricedModel) string {
		return fmt.Sprintf("%s\t%g\t%g\t%g\t%g", cell(p.ID), p.Price.Input, p.Price.Output, p.Price.CacheRead, p.Price.CacheWrite)
	})
}

type modelsUpdateCmd struct {
	From string `required:"" help:"A models TOML file or an http(s) URL."`
}

func (c *modelsUpdateCmd) Run(e *env) error {
	res, err := registry.Update(c.From, registry.DefaultCachePath(e.Getenv), nil)
	fe, we := (*registry.FetchError)(nil), (*registry.CacheWriteError)(nil)
	if errors.As(err, &fe) || errors.As(err, &we) {
		// The network, the server or the disk failed, not the command
		// line: exit 1, as any failure that is not a usage error (README).
		return withStatus(exitAgentFailed, err)
	}
	if err != nil {
		return withStatus(exitUsage, err)
	}
	_, err = fmt.Fprintf(e.Stdout, "updated %s: %d aliases, %d prices\n", res.Path, res.Aliases, res.Prices)
	return err
}

// cell is s fit for one cell of a table on a terminal: alias names and
// model ids come from files (a downloaded models table, harness.toml), and
// an escape sequence in one must not drive the terminal (ansi.TermSafe), nor a
// tab or a newline break the table's columns or rows.
func cell(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' {
			return ' '
		}
		return r
	}, ansi.TermSafe(s))
}
