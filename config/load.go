package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentharness/harness/internal/regfile"
	"github.com/agentharness/harness/registry"
	"github.com/pelletier/go-toml/v2"
)

// LoadOptions names everything Load reads. Zero fields read nothing, so a
// test builds exactly the world it wants.
type LoadOptions struct {
	// Cwd is where the search for harness.toml starts; "" searches nothing.
	Cwd string
	// ProjectFile, when set, is used instead of searching (the CLI's
	// --config); it must exist.
	ProjectFile string
	// UserFile is the user config; "" reads none (the CLI passes
	// DefaultUserFile(os.Getenv)). A user file that does not exist is not
	// an error; one that cannot be looked at (a symbolic link loop, a
	// directory that cannot be searched) is.
	UserFile string
	// Getenv reads HARNESS_* variables; nil reads none.
	Getenv func(string) string
	// Home is the user's home directory, which a path setting's leading
	// "~/" names (log_dir = "~/harness-logs"); "" makes such a value an
	// error.
	Home string
}

// Present reports whether the config file at path is there to be read:
// false only when nothing is at path. Anything else that keeps it from
// being looked at, a symbolic link loop, a link to nothing, a directory
// that cannot be searched, is an *Error naming path (exit 2): skipping
// it would silently drop the settings it holds. So is what is there but
// is not a regular file (a directory, a FIFO), in the words Load uses
// when it refuses to read one: `config path` said such a harness.toml
// was the project's file.
func Present(path string) (bool, error) {
	fi, err := os.Stat(path)
	if err == nil {
		if !fi.Mode().IsRegular() {
			return false, &Error{Source: path, Err: fmt.Errorf("%w (%s)", regfile.ErrNotRegular, regfile.Kind(fi.Mode()))}
		}
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(path); lerr != nil {
			return false, nil // nothing there (or its directory is missing)
		}
		err = errors.New("a symbolic link to nothing")
	} else {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the Error names the file
		}
	}
	return false, &Error{Source: path, Err: err}
}

// FindProject returns the harness.toml nearest to dir, walking up to the
// filesystem root, or "" when there is none. Anything there by that name
// is it, a directory too: Load then refuses what is not a regular file
// (exit 2), as it does the user's file, rather than skip it for a
// harness.toml further up and drop the settings meant here.
func FindProject(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	for {
		p := filepath.Join(dir, ProjectFileName)
		_, err := os.Stat(p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrPermission) {
			// Nothing there: look further up. Anything else (a link loop,
			// a link to nothing) is an error, as for the user's file.
			if _, err := Present(p); err != nil {
				return "", err
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Load merges defaults < user file < project file < HARNESS_* environment.
// It returns the configuration, warnings (unknown keys, naming key and
// file) and the first invalid value as an *Error. Config.Files lists the
// files read.
func Load(opts LoadOptions) (Config, []Warning, error) {
	c := Defaults()
	var warns []Warning
	if opts.UserFile != "" {
		present, err := Present(opts.UserFile)
		if err != nil {
			return c, warns, err
		}
		if present {
			w, err := c.applyFile(opts.UserFile, opts.UserFile, opts.Home)
			warns = append(warns, w...)
			if err != nil {
				return c, warns, err
			}
		}
	}
	project := opts.ProjectFile
	if project == "" {
		var err error
		if project, err = FindProject(opts.Cwd); err != nil {
			return c, warns, err
		}
	}
	if project != "" {
		w, err := c.applyFile(project, displayPath(opts.Cwd, project), opts.Home)
		warns = append(warns, w...)
		if err != nil {
			return c, warns, err
		}
	}
	if opts.Getenv != nil {
		if err := c.applyEnv(opts.Getenv, opts.Home); err != nil {
			return c, warns, err
		}
	}
	return c, warns, c.check()
}

// displayPath shows path relative to cwd when that is shorter, so an error
// reads "harness.toml: idle_timeout: …" in the project directory.
func displayPath(cwd, path string) string {
	if cwd == "" {
		return path
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(abs, path); err == nil && len(rel) < len(path) {
		return rel
	}
	return path
}

func (c *Config) applyEnv(getenv func(string) string, home string) error {
	for _, s := range settings() {
		if s.Env == "" {
			continue
		}
		raw := getenv(s.Env)
		if raw == "" {
			continue
		}
		source := "env " + s.Env
		if s.EnvInverts {
			b, err := parseBool(raw)
			if err != nil {
				return &Error{Source: source, Key: s.Key, Value: raw, Quote: true, Err: err}
			}
			raw = strconv.FormatBool(!b)
		}
		if err := s.set(c, raw); err != nil {
			return &Error{Source: source, Key: s.Key, Value: getenv(s.Env), Quote: true, Err: err}
		}
		// A relative path from the environment stays relative: it is the
		// directory harness runs in's, as any path a shell hands over.
		if err := c.resolvePath(s, "", home); err != nil {
			return &Error{Source: source, Key: s.Key, Value: raw, Quote: true, Err: err}
		}
		c.Origins[s.Key] = source
	}
	return nil
}

// check validates what only makes sense across keys.
func (c *Config) check() error {
	pairs := [][2]string{{"mcp.idle_min", "mcp.idle_max"}, {"mcp.hard_min", "mcp.hard_max"}}
	for _, p := range pairs {
		lo, _ := Lookup(p[0])
		hi, _ := Lookup(p[1])
		l, _ := ParseDuration(lo.get(c))
		h, _ := ParseDuration(hi.get(c))
		if h != 0 && l > h {
			return &Error{Source: c.Origins[p[0]], Key: p[0], Value: l.String(), Quote: true,
				Err: fmt.Errorf("is greater than %s (%q, from %s)", p[1], h.String(), c.Origins[p[1]])}
		}
	}
	return nil
}

// maxFile bounds a config file: one is a few KB; a FIFO or anything much
// larger put in its place is refused, not read (regfile).
const maxFile = 4 << 20

// fileSource is the config file being applied: name is how errors name
// it, dir its directory (absolute), home the user's home directory.
type fileSource struct{ name, dir, home string }

// applyFile reads one config file over c. name is how errors name it.
func (c *Config) applyFile(path, name, home string) ([]Warning, error) {
	data, err := regfile.ReadFile(path, maxFile)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the Error names the file
		}
		return nil, &Error{Source: name, Err: err}
	}
	tree, err := registry.DecodeTOML(data)
	if err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, &Error{Source: fmt.Sprintf("%s:%d:%d", name, row, col), Err: fmt.Errorf("%s", de.Error())}
		}
		var deep *registry.DeepError
		if errors.As(err, &deep) {
			return nil, &Error{Source: fmt.Sprintf("%s:%d:%d", name, deep.Line, deep.Column), Err: err}
		}
		return nil, &Error{Source: name, Err: err}
	}
	c.Files = append(c.Files, path)
	dir, _ := filepath.Abs(filepath.Dir(path))
	src := fileSource{name: name, dir: dir, home: home}
	var warns []Warning
	for _, k := range slices.Sorted(maps.Keys(tree)) {
		v := tree[k]
		switch k {
		case "agents":
			w, err := c.applyAgents(name, dir, v)
			warns = append(warns, w...)
			if err != nil {
				return warns, err
			}
		case "models":
			if err := c.applyModels(name, v); err != nil {
				return warns, err
			}
		default:
			w, err := c.applyTree(src, k, v)
			warns = append(warns, w...)
			if err != nil {
				return warns, err
			}
		}
	}
	return warns, nil
}

// applyTree applies a scalar setting or descends into a table of them.
func (c *Config) applyTree(src fileSource, key string, v any) ([]Warning, error) {
	name := src.name
	if sub, ok := v.(map[string]any); ok {
		if _, setting := Lookup(key); setting && !isTable(key) {
			// A known setting, not a table: its value is wrong, as an
			// array's would be (not "unknown table; did you mean" it).
			return nil, &Error{Source: name, Key: key, Err: errors.New("is a table, not a single value")}
		}
		if !isTable(key) {
			return []Warning{{Source: name, Key: key, Message: "unknown table (ignored)" + suggest(key)}}, nil
		}
		var warns []Warning
		for _, k := range slices.Sorted(maps.Keys(sub)) {
			w, err := c.applyTree(src, key+"."+k, sub[k])
			warns = append(warns, w...)
			if err != nil {
				return warns, err
			}
		}
		return warns, nil
	}
	s, ok := Lookup(key)
	if !ok && isTable(key) {
		// A known table given a value: as wrong as a table given where a
		// value is (above), not an unknown key to skip.
		what := "a single value"
		if _, isArray := v.([]any); isArray {
			what = "an array"
		}
		return nil, &Error{Source: name, Key: key, Err: fmt.Errorf("is %s, not a table (write [%s] and its keys below it)", what, key)}
	}
	if !ok {
		return []Warning{{Source: name, Key: key, Message: "unknown key (ignored)" + suggest(key)}}, nil
	}
	raw, err := scalarString(v)
	if err != nil {
		return nil, &Error{Source: name, Key: key, Err: err}
	}
	if err := s.set(c, raw); err != nil {
		_, isString := v.(string)
		return nil, &Error{Source: name, Key: key, Value: raw, Quote: isString || s.Kind != KindInt, Err: err}
	}
	if err := c.resolvePath(s, src.dir, src.home); err != nil {
		return nil, &Error{Source: name, Key: key, Value: raw, Quote: true, Err: err}
	}
	c.Origins[key] = name
	return nil, nil
}

// resolvePath makes the value of a path setting s just set mean the same
// from any directory: a leading "~/" is the home directory (no shell
// expands it in a file: it made a directory named "~" wherever harness
// ran), and a relative path is dir's, the directory of the file that set
// it, as an agent's binary is; dir "" leaves it relative.
func (c *Config) resolvePath(s Setting, dir, home string) error {
	if s.Kind != KindPath {
		return nil
	}
	p := s.get(c)
	switch {
	case p == "":
		return nil
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return errors.New("starts with ~ but the home directory is not known (HOME is not set)")
		}
		p = filepath.Join(home, p[1:])
	case strings.HasPrefix(p, "~"):
		return errors.New("names another user's home (~NAME), which harness does not expand: use ~/ or another path")
	case dir != "" && !filepath.IsAbs(p):
		p = filepath.Join(dir, p)
	}
	return s.set(c, p)
}

func isTable(key string) bool {
	for _, s := range settings() {
		if strings.HasPrefix(s.Key, key+".") {
			return true
		}
	}
	return false
}

// suggest names a setting close to an unknown key: the usual typo is a
// dash for an underscore or a missing table.
func suggest(key string) string {
	norm := strings.ReplaceAll(strings.ToLower(key), "-", "_")
	for _, s := range settings() {
		leaf := s.Key[strings.LastIndexByte(s.Key, '.')+1:]
		if s.Key == norm || (leaf == norm && leaf != s.Key) {
			return fmt.Sprintf("; did you mean %s?", s.Key)
		}
	}
	return ""
}

func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	if _, ok := v.([]any); ok {
		return "", errors.New("is an array, not a single value")
	}
	return "", errors.New("is a date or time, not a single value") // the only other kind of TOML value
}

// commandProtocolsHint tells how an agent harness has no adapter for is
// configured: "; any other ACP agent needs protocol = "acp" and command"
// for each protocol that starts agents from a command.
func commandProtocolsHint() string {
	var b strings.Builder
	for _, p := range registry.CommandProtocols() {
		fmt.Fprintf(&b, "; any other %s agent needs protocol = %q and command", strings.ToUpper(p), p)
	}
	return b.String()
}

// quotedOr is names quoted and joined by "or": `"cli" or "acp"`.
func quotedOr(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, " or ")
}

func (c *Config) applyAgents(name, dir string, v any) ([]Warning, error) {
	table, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Source: name, Key: "agents", Err: errors.New("must be a table of [agents.NAME] tables")}
	}
	var warns []Warning
	for _, agent := range slices.Sorted(maps.Keys(table)) {
		key := "agents." + agent
		fields, ok := table[agent].(map[string]any)
		if !ok {
			return warns, &Error{Source: name, Key: key, Err: errors.New("must be a table")}
		}
		id, known := registry.Canonical(agent)
		if !known {
			// Any other agent of a protocol that starts agents from a
			// command (ACP) is one entry: that protocol and its command.
			// Both are the merged table's: a project file may add a model
			// to the ACP agent the user's file defines.
			prev := c.Agents[agent]
			p := prev.Protocol
			if fp, ok := fields["protocol"].(string); ok {
				p = fp
			}
			if !registry.TakesCommand(p) {
				return warns, &Error{Source: name, Key: key, Value: agent, Quote: true,
					Err: fmt.Errorf("is not a known agent (known: %s%s)", strings.Join(registry.AgentIDs(), ", "), commandProtocolsHint())}
			}
			if fields["command"] == nil && len(prev.Command) == 0 {
				return warns, &Error{Source: name, Key: key, Err: fmt.Errorf("has protocol = %q but no command: an agent harness does not know is started by its command (command = [\"BINARY\", ARGS...])", p)}
			}
			id = agent
		}
		ac := c.Agents[id]
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			fv := fields[f]
			fkey := key + "." + f
			var err error
			switch f {
			case "binary":
				if ac.Binary, err = asString(fv); err == nil && strings.ContainsRune(ac.Binary, filepath.Separator) && !filepath.IsAbs(ac.Binary) {
					// A relative path is the file's, as a name is PATH's:
					// the same agent from any directory of the project.
					ac.Binary = filepath.Join(dir, ac.Binary)
				}
			case "model":
				ac.Model, err = asString(fv)
			case "args":
				ac.Args, err = asStrings(fv)
			case "env":
				if ac.Env, err = asStringMap(fv); err == nil {
					err = checkEnvTable(ac.Env)
				}
			case "protocol":
				if ac.Protocol, err = asString(fv); err == nil && !slices.Contains(registry.Protocols(), ac.Protocol) {
					err = fmt.Errorf("must be %s", quotedOr(registry.Protocols()))
				}
			case "command":
				if ac.Command, err = asStrings(fv); err == nil {
					err = checkCommand(ac.Command, !known)
				}
			default:
				warns = append(warns, Warning{Source: name, Key: fkey, Message: "unknown key (ignored); known: binary, args, env, model, protocol, command"})
				continue
			}
			if err != nil {
				return warns, &Error{Source: name, Key: fkey, Err: err}
			}
		}
		if c.Agents == nil {
			c.Agents = map[string]AgentConfig{}
		}
		c.Agents[id] = ac
	}
	return warns, nil
}

// checkCommand refuses an agent's command that starts nothing when the
// configuration is read, not at the run ("unknown agent", or the ACP
// adapter's "empty command"): an empty one where it is all the agent has
// (custom: an agent harness does not know; a known agent's empty command
// is its own ACP command), and a blank binary.
func checkCommand(command []string, custom bool) error {
	switch {
	case len(command) == 0 && custom:
		return errors.New("is empty: an agent harness does not know is started by its command (command = [\"BINARY\", ARGS...])")
	case len(command) > 0 && strings.TrimSpace(command[0]) == "":
		return errors.New("has an empty binary (its first element)")
	}
	return nil
}

func asString(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("must be a string")
	}
	return s, nil
}

func asStrings(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array of strings")
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("must be an array of strings")
		}
		out[i] = s
	}
	return out, nil
}

// checkEnvTable refuses what no environment can hold, as --env does: an
// empty name, a name with "=" (it would end the name early) and a NUL.
func checkEnvTable(env map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		switch {
		case k == "":
			return fmt.Errorf("an empty variable name")
		case strings.Contains(k, "="):
			return fmt.Errorf("%q: a variable name cannot hold \"=\"", k)
		case strings.ContainsRune(k+env[k], 0):
			return fmt.Errorf("%q: a NUL byte", k)
		}
	}
	return nil
}

func asStringMap(v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be a table of strings")
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%s: must be a string", k)
		}
		out[k] = s
	}
	return out, nil
}

// applyModels decodes [models] with the registry's own strict decoder
// (ParseTable), so that a models table means the same in harness.toml
// and in models.toml, and lays it over the files read before. Names are
// merged as the registry looks them up, aliases and model ids ignoring
// case and agents by their canonical id, so that the project's "Fast"
// replaces the user's "fast" instead of colliding with it.
func (c *Config) applyModels(name string, v any) error {
	table, ok := v.(map[string]any)
	if !ok {
		return &Error{Source: name, Key: "models", Err: errors.New("must be a table")}
	}
	f, err := registry.ParseTable(name, table)
	if err != nil {
		var fe *registry.FileError
		if errors.As(err, &fe) {
			key := "models"
			if fe.Key != "" {
				key += "." + fe.Key
			}
			return &Error{Source: name, Key: key, Err: fe.Err}
		}
		return &Error{Source: name, Key: "models", Err: err}
	}
	for alias, ids := range f.Aliases {
		alias = strings.ToLower(alias)
		if c.Models.Aliases == nil {
			c.Models.Aliases = map[string]map[string]string{}
		}
		if c.Models.Aliases[alias] == nil {
			c.Models.Aliases[alias] = map[string]string{}
		}
		for agent, id := range ids {
			canon, _ := registry.Canonical(agent) // ParseTable checked it
			c.Models.Aliases[alias][canon] = id
		}
	}
	for id, p := range f.Prices {
		if c.Models.Prices == nil {
			c.Models.Prices = map[string]registry.Price{}
		}
		c.Models.Prices[strings.ToLower(id)] = p
	}
	return nil
}
