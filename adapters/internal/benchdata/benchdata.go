// Package benchdata builds large native streams for throughput
// measurements by repeating an agent's captured cases from testdata/<agent>/
// — those whose golden output ends in a successful result — with fresh ids
// in every repetition (see Generate). It serves the benchgen command (make
// bench) and the adapters' benchmarks.
package benchdata

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Case is one captured native stream.
type Case struct {
	Name string
	Data []byte // ends with a newline
}

// LoadCases reads the cases of one agent's testdata directory whose golden
// output ends with a successful result, in name order.
func LoadCases(dir string) ([]Case, error) {
	inputs, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(inputs)
	var cases []Case
	for _, in := range inputs {
		base := strings.TrimSuffix(filepath.Base(in), ".jsonl")
		if strings.HasSuffix(base, ".raw") {
			continue
		}
		golden, err := os.ReadFile(filepath.Join(dir, base+".golden.ndjson"))
		if err != nil || !endsInSuccess(golden) {
			continue
		}
		data, err := os.ReadFile(in)
		if err != nil {
			return nil, err
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(data, '\n')
		}
		cases = append(cases, Case{Name: base, Data: data})
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no usable cases in %s (want NAME.jsonl with NAME.golden.ndjson ending in a successful result)", dir)
	}
	return cases, nil
}

func endsInSuccess(golden []byte) bool {
	golden = bytes.TrimRight(golden, "\n")
	last := golden[bytes.LastIndexByte(golden, '\n')+1:]
	return bytes.Contains(last, []byte(`"type":"result"`)) && bytes.Contains(last, []byte(`"status":"success"`))
}

// idValue matches a string value whose key ends in id, Id or ID: group 1
// is the key, group 2 the value (without quotes).
var idValue = regexp.MustCompile(`"([A-Za-z_]*(?:id|Id|ID))"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// BenchSession is the session id every case's main session gets: one long
// run has one session (OpenCode takes parts of any other session for a
// sub-agent's, and skips them).
const BenchSession = "benchgen_session"

func isSessionKey(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "session") || k == "thread_id"
}

// edit is one id value of a case to rewrite: the bytes [start, end) are
// the value; session values equal to the case's first are replaced with
// BenchSession, every other id gets the repetition's suffix at end.
type edit struct {
	start, end int
	main       bool
}

func edits(data []byte) []edit {
	var out []edit
	var first string
	for _, m := range idValue.FindAllSubmatchIndex(data, -1) {
		key, val := string(data[m[2]:m[3]]), string(data[m[4]:m[5]])
		e := edit{start: m[4], end: m[5]}
		if isSessionKey(key) && val != "" {
			if first == "" {
				first = val
			}
			e.main = val == first
		}
		out = append(out, e)
	}
	return out
}

// Generate writes whole repetitions of cases to w until at least size bytes
// are written. Each id of case c in repetition n is suffixed with
// "_r<n>c<c>", except the case's main session id, which becomes
// BenchSession. It returns the bytes written.
func Generate(w io.Writer, cases []Case, size int64) (int64, error) {
	plans := make([][]edit, len(cases))
	for i, c := range cases {
		plans[i] = edits(c.Data)
	}
	var written int64
	buf := make([]byte, 0, 64<<10)
	for rep := 0; written < size; rep++ {
		for i, c := range cases {
			suffix := "_r" + strconv.Itoa(rep) + "c" + strconv.Itoa(i)
			buf = buf[:0]
			prev := 0
			for _, e := range plans[i] {
				if e.main {
					buf = append(buf, c.Data[prev:e.start]...)
					buf = append(buf, BenchSession...)
				} else {
					buf = append(buf, c.Data[prev:e.end]...)
					buf = append(buf, suffix...)
				}
				prev = e.end
			}
			buf = append(buf, c.Data[prev:]...)
			n, err := w.Write(buf)
			written += int64(n)
			if err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// Match keeps the cases whose name matches the glob pattern.
func Match(cases []Case, pattern string) ([]Case, error) {
	var out []Case
	for _, c := range cases {
		ok, err := filepath.Match(pattern, c.Name)
		if err != nil {
			return nil, fmt.Errorf("-cases %q: %w", pattern, err)
		}
		if ok {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-cases %q matches no usable case", pattern)
	}
	return out, nil
}
