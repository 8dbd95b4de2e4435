package mockmodel

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// toolSpec is one tool offered in a request, whatever the API.
type toolSpec struct {
	Name string
	// Custom marks a freeform tool (Responses `"type":"custom"`, e.g. Codex's apply_patch): its
	// input is raw text, not JSON arguments.
	Custom bool
	// LocalShell marks the Responses built-in `local_shell` tool.
	LocalShell bool
	Schema     map[string]any
}

// call is a tool call resolved against the request's tools, ready to be rendered by an API.
type call struct {
	ID   string
	Name string
	// Args is the JSON argument object (function tools).
	Args map[string]any
	// Input is the raw input of a custom (freeform) tool.
	Input      string
	Custom     bool
	LocalShell bool
	// Command is the argv of a local_shell call.
	Command []string
}

// ArgsJSON is the call's arguments as a JSON object text.
func (c call) ArgsJSON() string {
	if c.Args == nil {
		return "{}"
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

var (
	shellOrder = []string{"Bash", "bash", "shell", "exec_command", "shell_command", "run_shell_command", "local_shell"}
	writeOrder = []string{"Write", "write", "write_file", "apply_patch"}
)

func findTool(tools []toolSpec, order []string, contains ...string) (toolSpec, bool) {
	for _, name := range order {
		for _, t := range tools {
			if t.Name == name {
				return t, true
			}
		}
	}
	for _, t := range tools {
		lower := strings.ToLower(t.Name)
		for _, c := range contains {
			if strings.Contains(lower, c) {
				return t, true
			}
		}
	}
	return toolSpec{}, false
}

func toolNames(tools []toolSpec) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

// resolve turns a scripted ToolCall into a concrete call of one of the request's tools. cwd, when
// the request revealed the CLI's working directory, makes relative write paths absolute for
// tools that want absolute paths.
func resolve(tc ToolCall, tools []toolSpec, cwd string) (call, error) {
	switch tc.Kind {
	case KindShell:
		t, ok := findTool(tools, shellOrder, "shell", "bash", "exec")
		if !ok {
			return call{}, fmt.Errorf("no shell tool among %v", toolNames(tools))
		}
		return shellCall(t, tc), nil
	case KindWrite:
		t, ok := findTool(tools, writeOrder, "write")
		if !ok {
			return call{}, fmt.Errorf("no file-writing tool among %v", toolNames(tools))
		}
		return writeCall(t, tc, cwd), nil
	default:
		i := slices.IndexFunc(tools, func(t toolSpec) bool { return t.Name == tc.Kind })
		if i < 0 {
			return call{}, fmt.Errorf("no tool %q among %v", tc.Kind, toolNames(tools))
		}
		c := call{Name: tc.Kind, Custom: tools[i].Custom, Args: map[string]any{}}
		for k, v := range tc.Args {
			c.Args[k] = v
		}
		if c.Custom {
			c.Input = tc.Content
		}
		return c, nil
	}
}

func shellCall(t toolSpec, tc ToolCall) call {
	argv := []any{"bash", "-lc", tc.Command}
	if t.LocalShell {
		return call{Name: t.Name, LocalShell: true, Command: []string{"bash", "-lc", tc.Command}}
	}
	if t.Custom {
		return call{Name: t.Name, Custom: true, Input: tc.Command}
	}
	props := properties(t.Schema)
	args := map[string]any{}
	key := "command"
	if _, ok := props["command"]; !ok {
		if _, ok := props["cmd"]; ok {
			key = "cmd"
		}
	}
	if schemaType(props[key]) == "array" {
		args[key] = argv
	} else {
		args[key] = tc.Command
	}
	fillRequired(t.Schema, args)
	for k, v := range tc.Args {
		args[k] = v
	}
	return call{Name: t.Name, Args: args}
}

func writeCall(t toolSpec, tc ToolCall, cwd string) call {
	if t.Name == "apply_patch" || t.Custom {
		patch := addFilePatch(tc.Path, tc.Content)
		if t.Custom {
			return call{Name: t.Name, Custom: true, Input: patch}
		}
		key := "input"
		props := properties(t.Schema)
		if _, ok := props["patch"]; ok {
			key = "patch"
		}
		return call{Name: t.Name, Args: map[string]any{key: patch}}
	}
	props := properties(t.Schema)
	path := tc.Path
	if cwd != "" && !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	args := map[string]any{}
	args[firstProp(props, "file_path", "file_path", "filePath", "path", "absolute_path", "target_file", "filename")] = path
	args[firstProp(props, "content", "content", "contents", "text", "file_text")] = tc.Content
	fillRequired(t.Schema, args)
	for k, v := range tc.Args {
		args[k] = v
	}
	return call{Name: t.Name, Args: args}
}

// addFilePatch is the apply_patch text that creates path with content.
func addFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, line := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteString("+" + strings.TrimSuffix(line, "\n") + "\n")
	}
	b.WriteString("*** End Patch")
	return b.String()
}

func properties(schema map[string]any) map[string]any {
	p, _ := schema["properties"].(map[string]any)
	return p
}

func schemaType(prop any) string {
	m, _ := prop.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		return strings.ToLower(t) // Gemini schemas spell types in upper case.
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return strings.ToLower(s)
			}
		}
	}
	return ""
}

// firstProp returns the first of names the schema has, or def.
func firstProp(props map[string]any, def string, names ...string) string {
	for _, n := range names {
		if _, ok := props[n]; ok {
			return n
		}
	}
	return def
}

// fillRequired gives every required field the schema lists and args lacks a plausible value, so
// the CLI's argument validation accepts the call.
func fillRequired(schema map[string]any, args map[string]any) {
	req, _ := schema["required"].([]any)
	props := properties(schema)
	for _, r := range req {
		name, ok := r.(string)
		if !ok {
			continue
		}
		if _, set := args[name]; set {
			continue
		}
		switch schemaType(props[name]) {
		case "integer", "number":
			if strings.Contains(strings.ToLower(name), "timeout") {
				args[name] = 60000
			} else {
				args[name] = 1
			}
		case "boolean":
			args[name] = false
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			if name == "description" {
				args[name] = "Run the scripted command"
			} else {
				args[name] = "mock"
			}
		}
	}
}

// cwdPattern finds the working directory CLIs state in their system prompts ("Working
// directory: /x" for Claude Code and OpenCode; Gemini CLI says "working directory ... /x").
var cwdPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)working directory:?\s*(?:is\s*)?(/[^\s"'\\<>]+)`)
})

func findCwd(body []byte) string {
	m := cwdPattern().FindSubmatch(body)
	if m == nil {
		return ""
	}
	return strings.TrimRight(string(m[1]), ".,;:)")
}
