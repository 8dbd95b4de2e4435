package registry

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/regfile"
)

//go:embed models.toml
var builtinTOML []byte

// Price is a model's list price in USD per million tokens. CacheRead and
// CacheWrite are zero where the provider does not charge them separately.
type Price struct {
	Input      float64 `toml:"input" json:"input"`
	Output     float64 `toml:"output" json:"output"`
	CacheRead  float64 `toml:"cache_read" json:"cache_read"`
	CacheWrite float64 `toml:"cache_write" json:"cache_write"`
}

// File is the shape of a models.toml, of the user cache and of the
// [models] table of harness.toml. Every field is optional.
type File struct {
	Source  string                       `toml:"source,omitempty"`
	Updated string                       `toml:"updated,omitempty"`
	Aliases map[string]map[string]string `toml:"aliases,omitempty"` // alias → agent id → model id
	Prices  map[string]Price             `toml:"prices,omitempty"`  // model id → price
}

// Models is a resolved model table: the builtin one with the user cache and
// project overrides laid over it. It is immutable after Load and safe for
// concurrent use.
type Models struct {
	// layers are the files Load read, merged over the builtin table on
	// first use (once): decoding the builtin models.toml was a tenth of
	// `harness run`'s work before the agent's spawn, and a run without
	// --model never looks a model up.
	layers  []layer
	once    sync.Once
	aliases map[string]map[string]string
	prices  map[string]Price
	sources []string

	// looked keeps Price's answers by the id asked: a run asks at every
	// usage event, and an id without a price walks the whole table (a
	// tenth of the instructions of a run of 2000 tool calls).
	lookedMu sync.Mutex
	looked   map[string]priceLookup
}

type priceLookup struct {
	price Price
	ok    bool
}

// maxLooked bounds Models.looked: an agent may name any number of models.
const maxLooked = 256

type layer struct {
	file   File
	source string
}

// table merges the layers over the builtin table the first time the
// table is read.
func (m *Models) table() *Models {
	m.once.Do(func() {
		builtin, err := ParseFile("builtin models.toml", builtinTOML)
		if err != nil {
			panic(err) // the embedded file: TestBuiltinParses keeps it valid
		}
		m.aliases, m.prices = map[string]map[string]string{}, map[string]Price{}
		m.merge(builtin, "builtin")
		for _, l := range m.layers {
			m.merge(l.file, l.source)
		}
	})
	return m
}

// ParseFile decodes and validates a models file (ParseTable). Unknown
// keys are errors, since a misspelt "prises" would silently drop every
// price. name is used in error messages.
func ParseFile(name string, data []byte) (File, error) {
	t, err := DecodeTOML(data)
	if err != nil {
		return File{}, fmt.Errorf("registry: %s: %w", name, err)
	}
	return ParseTable(name, t)
}

// CacheError is Load's error for a user cache it cannot read or parse; a
// caller may load again without the cache.
type CacheError struct {
	Path string
	Err  error
}

func (e *CacheError) Error() string { return e.Err.Error() }
func (e *CacheError) Unwrap() error { return e.Err }

// Load builds the model table: the builtin models.toml, then the user cache
// at userCache (skipped when "" or missing; a cache that is not a regular
// file, is over 4 MiB, unreadable or invalid is a *CacheError naming it),
// then project. A later layer replaces an alias's id for the agents it
// names and a model's whole price.
func Load(userCache string, project *File) (*Models, error) {
	m := &Models{}
	if userCache != "" {
		data, err := regfile.ReadFile(userCache, maxModelsFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, &CacheError{Path: userCache, Err: fmt.Errorf("registry: read model cache: %w", err)}
		default:
			f, err := ParseFile(userCache, data)
			if err != nil {
				return nil, &CacheError{Path: userCache, Err: err}
			}
			m.layers = append(m.layers, layer{f, userCache})
		}
	}
	if project != nil {
		if err := project.Validate("harness.toml [models]"); err != nil {
			return nil, err
		}
		m.layers = append(m.layers, layer{*project, "project"})
	}
	return m, nil
}

func (m *Models) merge(f File, source string) {
	for alias, ids := range f.Aliases {
		alias = strings.ToLower(alias)
		dst := m.aliases[alias]
		if dst == nil {
			dst = map[string]string{}
			m.aliases[alias] = dst
		}
		for agent, id := range ids {
			canon, _ := Canonical(agent)
			dst[canon] = id
		}
	}
	for id, p := range f.Prices {
		m.prices[strings.ToLower(id)] = p
	}
	m.sources = append(m.sources, source)
}

// Sources lists the layers the table was built from, lowest first.
func (m *Models) Sources() []string { return slices.Clone(m.table().sources) }

// IsAlias reports whether name is a known model alias.
func (m *Models) IsAlias(name string) bool {
	_, ok := m.table().aliases[strings.ToLower(name)]
	return ok
}

// Resolve returns the model id agent uses for alias. ok is true when alias
// is a known alias with an id for that agent (agent may be an agent alias).
// Otherwise id is alias unchanged, so that a full model id given by the
// user passes through; a caller that wants to reject a known alias the
// agent has no id for checks IsAlias.
func (m *Models) Resolve(alias, agent string) (id string, ok bool) {
	ids, found := m.table().aliases[strings.ToLower(alias)]
	if !found {
		return alias, false
	}
	canon, _ := Canonical(agent)
	if id, ok := ids[canon]; ok {
		return id, true
	}
	return alias, false
}

// datedSuffix matches the snapshot dates providers append to model ids:
// "-20250929", "-2025-08-07", "@20250929" (Vertex), and "-latest".
var datedSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$`) })

// Price returns the price of modelID. Lookup is case-insensitive and fuzzy
// in ways that cannot pick a different model's price: a "provider/" prefix,
// a "[1m]"-style bracket suffix and a snapshot date are stripped, and an id
// that is some agent's id for an alias ("sonnet-4.5" for Cursor) takes the
// price of another id of the same alias. "gpt-5-mini" never takes the price
// of "gpt-5".
func (m *Models) Price(modelID string) (Price, bool) {
	m.table()
	m.lookedMu.Lock()
	l, seen := m.looked[modelID]
	m.lookedMu.Unlock()
	if !seen {
		l.price, l.ok = m.lookUp(modelID)
		m.lookedMu.Lock()
		if m.looked == nil {
			m.looked = map[string]priceLookup{}
		}
		if len(m.looked) < maxLooked {
			m.looked[modelID] = l
		}
		m.lookedMu.Unlock()
	}
	return l.price, l.ok
}

func (m *Models) lookUp(modelID string) (Price, bool) {
	id := strings.ToLower(strings.TrimSpace(modelID))
	if id == "" {
		return Price{}, false
	}
	for _, cand := range candidates(id) {
		if p, ok := m.prices[cand]; ok {
			return p, true
		}
	}
	// An agent-specific id or an alias: try the ids of the same alias.
	for alias, ids := range m.aliases {
		match := alias == id
		for _, v := range ids {
			if strings.EqualFold(v, id) {
				match = true
			}
		}
		if !match {
			continue
		}
		for _, agent := range AgentIDs() { // a fixed order, for a stable answer
			v, ok := ids[agent]
			if !ok {
				continue
			}
			for _, cand := range candidates(strings.ToLower(v)) {
				if p, ok := m.prices[cand]; ok {
					return p, true
				}
			}
		}
	}
	return Price{}, false
}

func candidates(id string) []string {
	out := []string{id}
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
		out = append(out, id)
	}
	if i := strings.IndexByte(id, '['); i > 0 {
		id = id[:i]
		out = append(out, id)
	}
	if loc := datedSuffix().FindStringIndex(id); loc != nil {
		out = append(out, id[:loc[0]])
	}
	return out
}

// Estimate returns the list-price cost in USD of u on modelID, and false
// when modelID has no price. Token fields have the meanings of the event
// spec: input excludes cached tokens and output includes reasoning, so
// ReasoningTokens is not charged again.
func (m *Models) Estimate(modelID string, u event.Usage) (usd float64, ok bool) {
	p, ok := m.Price(modelID)
	if !ok {
		return 0, false
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6, true
}

// Entry is one alias of the table, for `harness models`.
type Entry struct {
	Alias string            `json:"alias"`
	IDs   map[string]string `json:"ids"` // agent id → model id
}

// List returns every alias, sorted by name.
func (m *Models) List() []Entry {
	m.table()
	out := make([]Entry, 0, len(m.aliases))
	for _, alias := range slices.Sorted(maps.Keys(m.aliases)) {
		out = append(out, Entry{Alias: alias, IDs: maps.Clone(m.aliases[alias])})
	}
	return out
}

// PricedModel is one priced model id.
type PricedModel struct {
	ID    string `json:"id"`
	Price Price  `json:"price"` // USD per million tokens
}

// Prices returns every priced model id, sorted.
func (m *Models) Prices() []PricedModel {
	m.table()
	out := make([]PricedModel, 0, len(m.prices))
	for _, id := range slices.Sorted(maps.Keys(m.prices)) {
		out = append(out, PricedModel{ID: id, Price: m.prices[id]})
	}
	return out
}
