// Command benchgen writes a large native stream for one agent, for
// throughput measurements of `harness parse` (make bench):
//
//	go run ./adapters/internal/benchgen -agent codex -size 200MB -o /tmp/codex.jsonl
//
// It repeats the agent's captured cases from testdata/<agent>/ — those
// whose golden output ends in a successful result, leaving out the .raw
// copies — until the stream reaches the size. Every id-like string value
// (keys ending in id/Id/ID) gets a suffix unique to its repetition and
// case, so the parser's and event.Stream's pairing and dedup see fresh ids
// as in one long run; and as one long run has one session, each case's
// main session id (its first) becomes the same fixed id everywhere, while
// other sessions (sub-agents') stay distinct. The stream always ends with a whole case, and so with the
// agent's terminal event.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	agent := flag.String("agent", "", "agent whose testdata to repeat: claude, codex, cursor, gemini, opencode")
	size := flag.String("size", "200MB", "at least this many bytes (suffixes KB, MB, GB; powers of 1000)")
	out := flag.String("o", "", "output file (default stdout)")
	dir := flag.String("testdata", "", "testdata directory (default: testdata/ of the enclosing module)")
	cases := flag.String("cases", "*", "only the cases whose name matches this glob (e.g. 'partial-*' for Claude's partial-message captures)")
	flag.Parse()
	if err := run(*agent, *size, *out, *dir, *cases); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
}

func run(agent, size, out, dir, pattern string) error {
	if agent == "" || strings.ContainsAny(agent, `/\.`) {
		return errors.New("-agent is required (claude, codex, cursor, gemini, opencode)")
	}
	n, err := parseSize(size)
	if err != nil {
		return err
	}
	if dir == "" {
		if dir, err = findTestdata(); err != nil {
			return err
		}
	}
	cases, err := loadCases(filepath.Join(dir, agent))
	if err != nil {
		return err
	}
	cases, err = matching(cases, pattern)
	if err != nil {
		return err
	}
	var w io.Writer = os.Stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := Generate(bw, cases, n); err != nil {
		return err
	}
	return bw.Flush()
}

// parseSize reads "200MB", "1.5GB", "4096".
func parseSize(s string) (int64, error) {
	mult := int64(1)
	u := strings.ToUpper(strings.TrimSpace(s))
	for _, x := range []struct {
		suffix string
		m      int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}} {
		if strings.HasSuffix(u, x.suffix) {
			u, mult = strings.TrimSuffix(u, x.suffix), x.m
			break
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(u), 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("bad -size %q: want a positive number with an optional KB, MB or GB", s)
	}
	return int64(f * float64(mult)), nil
}

// findTestdata walks up from the working directory to the module root.
func findTestdata() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "testdata"), nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("no go.mod above the working directory; pass -testdata")
		}
		d = up
	}
}

// Case is one captured native stream.
type Case struct {
	Name string
	Data []byte // ends with a newline
}

// loadCases reads the cases of one agent's testdata directory whose golden
// output ends with a successful result, in name order.
func loadCases(dir string) ([]Case, error) {
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

// matching keeps the cases whose name matches the glob pattern.
func matching(cases []Case, pattern string) ([]Case, error) {
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
