package logger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentharness/harness/event"
)

// Redacted replaces every secret the Redactor finds.
const Redacted = "[REDACTED]"

// Redactor removes secrets from log lines before they are written. It is
// immutable after construction and safe for concurrent use.
//
// It knows token shapes (OpenAI/Anthropic "sk-…", "Bearer …", GitHub
// "ghp_…"/"github_pat_…", GitLab "glpat-…", Stripe "sk_live_…", Slack
// "xox…-", npm "npm_…", AWS "AKIA…", Google "AIza…"), the credentials of
// an "Authorization:" header whatever its scheme, passwords in URLs
// ("scheme://user:password@host"), "key=value" and "key": "value" pairs
// whose key names a secret (api_key, password, secret, token,
// aws_secret_access_key, …), the body of a PEM private key block
// ("-----BEGIN … PRIVATE KEY-----" to its END, or to the end of the line)
// held in one line or string, the values of secret-looking environment
// variables, and the values given to WithEnv, by value (as given, and as
// JSON strings nested up to jsonDepth deep hold them: valueForms). A value
// that holds line breaks (a PEM key, a credentials file) is also redacted
// line by line (valueLines), since logs are redacted a line at a time.
//
// A line is first checked against a table of trigger substrings in one pass;
// only lines that contain one go through the regular expressions, so the
// common line costs a scan. On a JSON line, only the contents of strings are
// rewritten, and strings with escapes are decoded, redacted and re-encoded,
// so the line stays valid JSON.
type Redactor struct {
	// triggers are lowercase needles indexed by their first byte; env holds
	// secret values, matched case-sensitively.
	triggers [256][]trigger
	env      [][]byte
	envBy    [256][]envHead // env by first byte, then by the next two
	values   []string       // the secret values as given (Values)
	// givenVals are those of values that are not lines of multi-line
	// ones (lineVals): what WithEnv adds its own to.
	givenVals []string
	// The lines of multi-line values (valueLines): as given (lineVals),
	// and their forms, found by blocks rather than by the scan's bigrams.
	// repl is env and those forms, longest first: what redactText
	// replaces (env itself when there are none).
	lineVals []string
	blocks   *blockIndex
	repl     [][]byte
	// bigrams tells, for two bytes (little endian), whether they are the
	// first two of a trigger (in either case) or of a secret value
	// (startsHere), or its second and third (startsBefore).
	bigrams *[1 << 16]uint8
}

// envHead is the secret values (Redactor.env) that start with a byte and
// then b1 and b2. A value's forms (valueForms) share their bytes up to
// its first special character, so there are far fewer heads than forms:
// at rules out most forms with one test, not one each (a prose line
// with 124 forms of four values: 6,706 -> 5,222 instructions a line,
// callgrind, BenchmarkRedactNestedEnv; 5,639 with their one-level forms).
type envHead struct {
	b1, b2 byte
	vals   [][]byte // longest first
}

// Bits of Redactor.bigrams.
const (
	startsHere   = 1 << iota // a needle may start at the first byte
	startsBefore             // a needle may start just before it
)

// trigger is a lowercase needle and the rules it calls for.
type trigger struct {
	needle string
	rules  rule
	// wordEnd: the needle counts only where no letter or digit follows
	// it. A pair key ends with its word ("api_key", "x_token" before ":"
	// or "="; secretKey's suffixes), so "input_tokens", "keyboard" and
	// "secrets" call for nothing: a usage line is not rewritten.
	wordEnd bool
}

// rule is a set of redaction rules a line may need.
type rule uint8

const (
	ruleShape  rule = 1 << iota // tokenRE
	ruleBearer                  // bearerRE
	rulePair                    // pairRE and JSON secret keys
	ruleEnv                     // a secret env value
	ruleAuth                    // authRE
	ruleURL                     // urlRE
	// ruleEscape: a JSON escape of a character below U+0100 ("\u0073"
	// for "s"). An encoder may escape any character, so a secret may hide
	// behind one from the scan of the raw line; the JSON path decodes the
	// strings and scans them again.
	ruleEscape
	rulePEM // pemRE
)

// wordStart is where a token may start: \b, or right after a text escape
// ("\n", "\t", …: a JSON document or a log quoted inside a string, or
// written to stderr), where \b sees none ("\nsk-": n and s are both word
// characters). A match that starts with the escape keeps it (tokenRE's
// replacement; the others' groups).
const wordStart = `(?:\b|\\[nrtbf])`

// secret-shaped tokens. Each alternative starts with a literal trigger.
var (
	// Compiled when first needed, not at every start-up of harness.
	tokenRE = lazyRE(wordStart + `(?:` +
		`sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}` +
		`|(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{20,}` +
		`|github_pat_[A-Za-z0-9_]{20,}` +
		`|gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20,}` +
		`|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}` +
		`|xox[abposr]-[A-Za-z0-9-]{10,}` +
		`|npm_[A-Za-z0-9]{36}\b` +
		`|(?:AKIA|ASIA)[A-Z0-9]{16}\b` +
		`|AIza[0-9A-Za-z_-]{35})`)
	bearerRE = lazyRE(`(?i)` + wordStart + `(bearer\s+)([A-Za-z0-9._~+/=-]{8,})`)
	// authRE matches an Authorization header (or Proxy-Authorization) with
	// or without its scheme (Basic, Token, …); group 2 is the credentials,
	// "[" and "]" in it so that what bearerRE redacted is skipped.
	authRE = lazyRE(`(?i)` + wordStart + `(authorization["']?\s*[:=]\s*["']?(?:[a-z]+[ \t]+)?)([\[\]A-Za-z0-9._~+/=:-]{4,})`)
	// urlRE matches the password of a URL's user info; group 2 is it.
	urlRE = lazyRE(`(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@"'<>]*:)([^\s/@"'<>]+)@`)
	// pairRE matches key=value and "key": "value" inside text; the value
	// is the first of groups 2-5 that matched. A value in quotes is taken
	// whole, up to its closing quote on the line (password="a b c",
	// API_TOKEN='a b', "a \" b"), and so is one in escaped quotes
	// (password=\"a b\": a command in a JSON string printed as is, or
	// quoted twice); a quote that does not close leaves the first word.
	// A closing quote is one a separator follows (pairEnd): one a word
	// follows opened it (the quote after `grep "token:` closes the
	// pattern; `", "path"` is no value). An unquoted value takes no
	// backslash that escapes a quote (`\"token\":\"\"` has none).
	pairRE = lazyRE(`(?i)\b([a-z0-9_.-]*(?:api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|password|passwd|secret|access[_-]?token|auth[_-]?token|token|credentials?))(?:\\?["'])?\s*[:=]\s*` +
		`(?:"((?:[^"\\\r\n]|\\.)+)"` + pairEnd + `|'([^'\r\n]+)'` + pairEnd + `|\\"([^"\r\n]+?)\\"` + pairEnd +
		`|(?:\\?["'])?((?:[^\s"',;&}\\]|\\[^\s"'])+))`)
	// pemRE matches a PEM private key block (PKCS#1, PKCS#8, EC,
	// OpenSSH, encrypted, PGP's "PRIVATE KEY BLOCK") within one line or
	// JSON string: a tool's output that printed a key file, its line
	// breaks escaped or decoded. Group 2, the body, runs to the END line
	// or, when that was cut off (head, a preview), to the end of the text.
	// The armor lines are no secret and stay, to tell what was there.
	// Across lines of text (stderr), only the values given to WithEnv are
	// known: a line of the body holds nothing that tells it from others.
	pemRE = lazyRE(`(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)` + pemBlanks + `([A-Za-z0-9+/[](?s:.*?))` +
		pemBlanks + `(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`)
)

// pemBlanks are the blanks and line breaks, escaped or not, around the
// body of a PEM block: they stay. The body starts with a character of
// base64 or of a header ("Proc-Type:", "Version:"), or with "[" (lines
// of a value given to WithEnv were redacted first; what follows them
// still goes): a block with no body, or armor quoted in a command
// (grep "-----BEGIN … KEY-----"), is no match.
const pemBlanks = `(?:\s|\\[nr])*`

// pairEnd is what may follow a quoted value of pairRE: the end, a space,
// a quote (of a string around it) or punctuation.
const pairEnd = `(?:$|[\s"'\\,;&|)}\]>.:!?])`

// lazyRE compiles expr the first time it is used.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// The needle, the rules it calls for, and whether it counts only at a
// word's end (trigger.wordEnd).
var baseTriggers = []trigger{
	{"sk-", ruleShape, false}, {"ghp_", ruleShape, false}, {"gho_", ruleShape, false}, {"ghs_", ruleShape, false},
	{"ghu_", ruleShape, false}, {"ghr_", ruleShape, false}, {"github_pat_", ruleShape, false},
	{"glpat-", ruleShape, false}, {"gldt-", ruleShape, false}, {"glrt-", ruleShape, false}, {"glptt-", ruleShape, false}, {"glcbt-", ruleShape, false},
	{"sk_", ruleShape, false}, {"rk_", ruleShape, false}, {"xox", ruleShape, false}, {"npm_", ruleShape, false},
	{"://", ruleURL, false}, {`:\/\/`, ruleURL, false}, // JSON may escape "/"
	{"akia", ruleShape, false}, {"asia", ruleShape, false}, {"aiza", ruleShape, false},
	{"bearer", ruleBearer, false},
	{"key", rulePair, true}, {"password", rulePair, true}, {"passwd", rulePair, true}, {"secret", rulePair, true},
	{"token", rulePair, true}, {"authorization", rulePair | ruleAuth, false}, {"credential", rulePair, false},
	{`\u00`, ruleEscape, false},
	{"-----begin", rulePEM, false},
}

// secretKeySuffixes tell whether a JSON object key (lowercased, without
// "_" and "-") names a secret value.
var secretKeySuffixes = []string{"apikey", "password", "passwd", "secret", "token",
	"authorization", "credential", "credentials", "privatekey", "accesskey", "secretkey"}

func secretKey(key []byte) bool {
	var buf [64]byte
	k := buf[:0]
	for _, c := range key {
		switch {
		case c == '_' || c == '-':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		k = append(k, c)
	}
	for _, suf := range secretKeySuffixes {
		if bytes.HasSuffix(k, []byte(suf)) {
			return true
		}
	}
	return false
}

// NewRedactor returns a Redactor for the given environment (KEY=VALUE
// pairs, as os.Environ returns). The values of variables whose names look
// secret (*_KEY, *_TOKEN, *_SECRET, *PASSWORD*, *_API_KEY) and that are
// longer than 8 characters are redacted wherever they appear.
func NewRedactor(environ []string) *Redactor {
	r := &Redactor{bigrams: new([1 << 16]uint8)}
	for _, t := range baseTriggers {
		c := t.needle[0]
		r.triggers[c] = append(r.triggers[c], t)
		r.setBigrams(t.needle, bothCases)
	}
	var vals, lines []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || len(val) <= 8 {
			continue
		}
		switch {
		case secretEnvName(name):
			vals, lines = addValue(vals, lines, val, 9)
		case otlpHeadersName(name):
			vals = append(vals, headerValues(val)...)
		}
	}
	r.addValues(vals, lines)
	return r
}

// otlpHeadersName reports whether name is an OTLP exporter's headers
// variable (OTEL_EXPORTER_OTLP_HEADERS, …_TRACES_HEADERS): a collector's
// API key goes there, and every agent inherits it.
func otlpHeadersName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasPrefix(n, "OTEL_EXPORTER_OTLP_") && strings.HasSuffix(n, "HEADERS")
}

// headerValues are the secrets of an OTLP headers variable ("key=value,…",
// values percent-encoded): the whole of it, and each value longer than 8
// bytes as written and decoded ("Bearer%20k…" and "Bearer k…", and the
// credentials after the scheme).
func headerValues(v string) []string {
	vals := []string{v}
	for pair := range strings.SplitSeq(v, ",") {
		_, val, ok := strings.Cut(pair, "=")
		val = strings.TrimSpace(val)
		if !ok || len(val) <= 8 {
			continue
		}
		vals = append(vals, val)
		if dec, err := url.PathUnescape(val); err == nil && dec != val {
			vals = append(vals, dec)
			// "Bearer k…": the credentials alone, as a tool may print them.
			if _, cred, ok := strings.Cut(dec, " "); ok && len(cred) > 8 {
				vals = append(vals, cred)
			}
		}
	}
	return vals
}

// bothCases is c, and its upper case when it is a lowercase letter.
func bothCases(c byte) []byte {
	if 'a' <= c && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

// The scan needs needles of at least three bytes: this fails to compile
// if the least secret value is made shorter.
const _ = uint(MinSecretValueLen - 3)

// exactCase is c alone: secret values are matched case-sensitively.
func exactCase(c byte) []byte { return []byte{c} }

// setBigrams marks the first three bytes of needle, in the cases forms
// gives, in r.bigrams. Every needle is at least three bytes long (the
// triggers; values at least MinSecretValueLen).
func (r *Redactor) setBigrams(needle string, forms func(byte) []byte) {
	for _, a := range forms(needle[0]) {
		for _, b := range forms(needle[1]) {
			r.bigrams[uint16(a)|uint16(b)<<8] |= startsHere
			for _, c := range forms(needle[2]) {
				r.bigrams[uint16(b)|uint16(c)<<8] |= startsBefore
			}
		}
	}
}

// Least lengths of a value given to WithEnv: shorter ones are too common
// in text to be replaced everywhere (and too short to be worth stealing).
const (
	MinSecretValueLen = 4 // of a variable whose name looks secret
	MinValueLen       = 6 // of any other
)

// WithEnv returns a copy of r that also redacts, wherever they appear, the
// values of pairs (KEY=VALUE): the environment the user handed the agent
// through harness's own settings (--env, a config env table), whatever the
// names. A value shorter than MinValueLen bytes (MinSecretValueLen when its
// name looks secret: *KEY*, *TOKEN*, *SECRET*, *PASS*, *PWD*, *AUTH*,
// *CRED*) is kept. r is not changed.
func (r *Redactor) WithEnv(pairs []string) *Redactor {
	var vals, lines []string
	for _, kv := range pairs {
		name, val, _ := strings.Cut(kv, "=")
		if notSecret[name] {
			continue
		}
		n := MinValueLen
		if looseSecretName(name) {
			n = MinSecretValueLen
		}
		if len(val) >= n {
			vals, lines = addValue(vals, lines, val, n)
		}
	}
	if len(vals) == 0 {
		return r
	}
	c := &Redactor{triggers: r.triggers, bigrams: new([1 << 16]uint8)}
	*c.bigrams = *r.bigrams
	// r's values as given, not their forms (r.env): forms of forms would
	// be encoded jsonDepth levels deeper again, and multiply.
	vals = append(vals, r.givenVals...)
	c.addValues(vals, append(lines, r.lineVals...))
	return c
}

// addValue adds the value v, at least least bytes long, to vals, and
// its lines, if it has several, to lines (valueLines).
func addValue(vals, lines []string, v string, least int) ([]string, []string) {
	vals = append(vals, v)
	more, one := valueLines(v, least)
	if one != "" {
		vals = append(vals, one)
	}
	return vals, append(lines, more...)
}

// notSecret names variables that say where, never who: their values are
// paths that fill every log line (PWD is no password).
var notSecret = map[string]bool{"PWD": true, "OLDPWD": true, "HOME": true, "TMPDIR": true}

func looseSecretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASS", "PWD", "AUTH", "CRED"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// addValues sets the values redacted by value, vals and the lines of
// multi-line values (valueLines): each, and the forms JSON encoders may
// give it inside strings nested up to jsonDepth deep (valueForms), so
// that the scan of a raw line finds it; redactJSON then matches the
// decoded string, which holds a form one level less deep.
func (r *Redactor) addValues(vals, lines []string) {
	r.values = slices.Concat(vals, lines)
	r.givenVals = slices.Clone(vals)
	r.lineVals = slices.Clone(lines)
	seen := map[string]bool{}
	forms := func(vals []string) [][]byte {
		var all [][]byte
		for _, v := range vals {
			for _, f := range valueForms(v) {
				if !seen[f] {
					seen[f] = true
					all = append(all, []byte(f))
				}
			}
		}
		return all
	}
	whole, long := forms(vals), forms(lines)
	long = slices.DeleteFunc(long, func(f []byte) bool {
		if len(f) < blockMinLen { // a key's last line, at most: too short for blocks
			whole = append(whole, f)
			return true
		}
		return false
	})
	// Longest first, so a value that contains another is replaced whole.
	longestFirst := func(all [][]byte) {
		sort.SliceStable(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	}
	longestFirst(whole)
	r.env = whole
	r.envBy = [256][]envHead{}
	for _, v := range whole {
		heads := r.envBy[v[0]]
		k := slices.IndexFunc(heads, func(h envHead) bool { return h.b1 == v[1] && h.b2 == v[2] })
		if k < 0 {
			k = len(heads)
			r.envBy[v[0]] = append(heads, envHead{b1: v[1], b2: v[2]})
		}
		r.envBy[v[0]][k].vals = append(r.envBy[v[0]][k].vals, v)
		r.setBigrams(string(v), exactCase)
	}
	r.repl, r.blocks = r.env, nil
	if len(long) > 0 {
		r.blocks = newBlockIndex(long)
		r.repl = slices.Concat(whole, long)
		longestFirst(r.repl)
	}
}

// Values returns the secret values r redacts by value (WithEnv's, and
// those of the environment's secret-looking variables, with the lines of
// those that hold line breaks: valueLines): what a cut of the event
// stream must not go through (event.StreamConfig.Secrets).
func (r *Redactor) Values() []string { return slices.Clone(r.values) }

// jsonDepth is how many JSON strings deep a secret value is found by the
// scan. An agent's line is one; a tool whose output is JSON
// (json.dumps, an MCP server, kubectl -o json) puts the value in a string
// of that, two deep; a string of JSON inside that (an MCP result's text,
// a config file's embedded document), or the event stream's unparsed_line
// warning, which carries a whole line of the agent as a string, makes
// three. Each level escapes the escapes of the one inside (a quote is
// \" one deep, \\\" two deep), and the scan compares raw bytes: it
// decodes nothing (that keeps it cheap), so it needs the value's form at
// each depth. Past the first, redactJSON finds the form one level less
// deep in the decoded string.
const jsonDepth = 3

// valueForms returns v and the forms JSON encoders give it inside a
// string, inside a string of JSON text, … jsonDepth deep: each level's
// forms encoded by each encoder (jsonForm, otherEncoders), so that a
// chain of different encoders (Python's ensure_ascii over Go's) is
// covered. Most values (letters, digits, "-", "_") have one form; one
// with "/" twice as many a level (PHP's "\/" or not), and one with every
// kind of special character about a hundred in all (see the test).
func valueForms(v string) []string {
	forms := []string{v}
	seen := map[string]bool{v: true}
	level := forms
	for range jsonDepth {
		var next []string
		for _, f := range level {
			js := jsonForm(f, false)
			for _, g := range append([]string{js, jsonForm(f, true)}, otherEncoders(js)...) {
				if g != "" && !seen[g] {
					seen[g] = true
					next = append(next, g)
				}
			}
		}
		forms = append(forms, next...)
		level = next
	}
	return forms
}

// otherEncoders are the forms other JSON encoders give the inside of a
// JSON string js (as Go writes it, HTML unescaped): "/" escaped as "\/"
// (PHP, some loggers), and every character past ASCII as \uXXXX in lower
// and upper case hex (Python's ensure_ascii, Java's), with "/" escaped or
// not. Only those that differ from js.
func otherEncoders(js string) []string {
	var forms []string
	add := func(f string) {
		if f != js && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, hex := range []string{"%04x", "%04X"} {
		var b strings.Builder
		for _, r := range js {
			switch {
			case r < utf8.RuneSelf:
				b.WriteRune(r)
			case r > 0xFFFF:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u`+hex+`\u`+hex, r1, r2)
			default:
				fmt.Fprintf(&b, `\u`+hex, r)
			}
		}
		add(b.String())
		add(strings.ReplaceAll(b.String(), "/", `\/`))
	}
	return forms
}

// jsonForm is v as the inside of a JSON string, with HTML characters
// escaped or not (Go escapes them by default, most encoders do not).
func jsonForm(v string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if enc.Encode(v) != nil {
		return ""
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	out = bytes.TrimSpace(out)
	if len(out) < 2 {
		return ""
	}
	return string(out[1 : len(out)-1])
}

// SecretEnv reports whether the value of the environment variable name
// is one NewRedactor takes for a secret: a name that looks secret
// (*_KEY, *_TOKEN, *_SECRET, *PASSWORD*) or an OTLP exporter's headers.
func SecretEnv(name string) bool { return secretEnvName(name) || otlpHeadersName(name) }

func secretEnvName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_KEY") || strings.HasSuffix(n, "_TOKEN") ||
		strings.HasSuffix(n, "_SECRET") || strings.Contains(n, "PASSWORD")
}

var defaultRedactor = sync.OnceValue(func() *Redactor { return NewRedactor(os.Environ()) })

// DefaultRedactor returns a Redactor for the process environment, built once.
func DefaultRedactor() *Redactor { return defaultRedactor() }

// scan returns the rules line calls for: the trigger words it holds,
// case-insensitively, and whether it holds a secret value. It runs on
// every line of the log (a flood of 1 GiB is scanned twice: native lines
// and events), so it looks up every other pair of bytes only. Every needle
// (a trigger word, a secret value) is at least three bytes long, so an
// occurrence starting at i has its first two bytes (i even) or its second
// and third (i odd) at an even position; a pair that is neither for any
// needle (most pairs of text) rules out both starts with one lookup.
// Compared with a lookup of every other byte (most letters are the first
// or second of some needle), Redact runs 32% fewer instructions on a line
// of the flood fake and 52% fewer on a clean line of Claude's stream
// (callgrind, BenchmarkRedact: 6,790 -> 4,650 and 7,530 -> 3,600 a line).
func (r *Redactor) scan(line []byte) rule {
	var rules rule
	bg := r.bigrams
	_ = bg[0] // the nil check, before the loop
	p := 0
	// Eight pairs (16 bytes) a test, each loaded as such, not cut from a
	// uint64 (fewer instructions a pair, and one loop step for 16 bytes);
	// on a hit, only the pairs that hit go to around. Against a test of
	// eight bytes whose hit sent all four pairs to around, Redact runs
	// 4,680 -> 2,490 instructions on a line of the flood fake, 13,900 ->
	// 5,580 on a line of English and 9,790 -> 4,250 on one of Go code
	// (callgrind, BenchmarkRedact's lines; around's check of the other
	// pair is part of it). Tests of 32 bytes cut the flood line from 2,490
	// to 2,120 but cost prose and code 4-8%: there one pair in 12 or 24
	// hits.
	//
	// The loop is written so that it has no bounds check and the table's
	// nil check is made once: 2,496 -> 2,004 instructions on the flood
	// line, 5,586 -> 5,194 on prose, 4,249 -> 3,829 on code (callgrind).
	for last := len(line) - 16; p <= last; p += 16 {
		w := (*[16]byte)(line[p:])
		if bg[pairAt(w, 0)]|bg[pairAt(w, 2)]|bg[pairAt(w, 4)]|bg[pairAt(w, 6)]|
			bg[pairAt(w, 8)]|bg[pairAt(w, 10)]|bg[pairAt(w, 12)]|bg[pairAt(w, 14)] == 0 {
			continue
		}
		for q := 0; q < 16; q += 2 {
			if b := bg[pairAt(w, q)]; b != 0 {
				rules |= r.around(line, p+q, b, rules)
			}
		}
	}
	for ; p+1 < len(line); p += 2 {
		if b := bg[pairIn(line, p)]; b != 0 {
			rules |= r.around(line, p, b, rules)
		}
	}
	if r.blocks != nil && rules&ruleEnv == 0 && r.blocks.contains(line) {
		rules |= ruleEnv
	}
	return rules
}

// pairAt is the pair of bytes at w[i] as an index of Redactor.bigrams.
func pairAt(w *[16]byte, i int) uint16 { return uint16(w[i]) | uint16(w[i+1])<<8 }

// pairIn is the pair of bytes at line[i] as an index of Redactor.bigrams.
func pairIn(line []byte, i int) uint16 { return uint16(line[i]) | uint16(line[i+1])<<8 }

// around returns the rules of the needles starting at p-1 or p that the
// pair of bytes at p, whose bigrams entry is b, may begin, besides those
// in found.
func (r *Redactor) around(line []byte, p int, b uint8, found rule) rule {
	var rules rule
	// A needle's first three bytes are a startsHere pair and then a
	// startsBefore pair: the other pair is looked up before at compares
	// needles. Most pairs of prose that hit ("as" of "was ", "it" of
	// "with") go no further: at runs twice on BenchmarkRedact's line of
	// English instead of 36 times.
	if b&startsBefore != 0 && p > 0 && r.bigrams[pairIn(line, p-1)]&startsHere != 0 {
		rules |= r.at(line, p-1, found)
	}
	if b&startsHere != 0 && p+2 < len(line) && r.bigrams[pairIn(line, p+1)]&startsBefore != 0 {
		rules |= r.at(line, p, found|rules)
	}
	return rules
}

// at returns the rules that a needle starting at line[i] calls for,
// besides those in found.
func (r *Redactor) at(line []byte, i int, found rule) rule {
	c := line[i]
	var rules rule
	if found&ruleEnv == 0 && len(line)-i >= 3 { // every value has three bytes or more
	heads:
		for _, h := range r.envBy[c] {
			if line[i+1] != h.b1 || line[i+2] != h.b2 {
				continue
			}
			for _, v := range h.vals {
				if len(line)-i >= len(v) && bytes.Equal(line[i:i+len(v)], v) {
					rules |= ruleEnv
					break heads
				}
			}
		}
	}
	for _, t := range r.triggers[lower(c)] {
		// The second byte first: most candidates end there.
		if t.rules&^found != 0 && len(line)-i >= len(t.needle) && lower(line[i+1]) == t.needle[1] &&
			asciiEqualFold(line[i+2:i+len(t.needle)], t.needle[2:]) && !(t.wordEnd && alnumAt(line, i+len(t.needle))) {
			rules |= t.rules
		}
	}
	return rules
}

// alnumAt reports whether line[i] is an ASCII letter or digit.
func alnumAt(line []byte, i int) bool {
	if i >= len(line) {
		return false
	}
	c := lower(line[i])
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func asciiEqualFold(b []byte, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// Redact returns line with secrets replaced by [REDACTED]. It returns line
// itself (no copy) when there is nothing to redact; otherwise a new slice.
// A line that is a JSON object or array stays valid JSON.
func (r *Redactor) Redact(line []byte) []byte {
	if r == nil {
		return line
	}
	rules := r.scan(line)
	if rules == 0 {
		return line
	}
	trimmed := bytes.TrimLeft(line, " \t")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(line) {
		return r.redactJSON(line)
	}
	if rules == ruleEscape { // text: "\u0073" is what it says
		return line
	}
	return r.redactText(bytes.Clone(line), rules)
}

// RedactString is Redact for a string.
func (r *Redactor) RedactString(s string) string {
	out := r.Redact([]byte(s))
	return string(out)
}

// redactText applies the given rules to plain text b, which it may modify.
func (r *Redactor) redactText(b []byte, rules rule) []byte {
	if rules&ruleEnv != 0 {
		for _, v := range r.repl {
			if bytes.Contains(b, v) {
				b = bytes.ReplaceAll(b, v, []byte(Redacted))
			}
		}
	}
	if rules&ruleShape != 0 {
		b = tokenRE().ReplaceAllFunc(b, func(m []byte) []byte {
			esc := 0
			if m[0] == '\\' {
				esc = 2 // the text escape before the token stays (wordStart)
			}
			if tok := m[esc:]; bytes.HasPrefix(tok, []byte("sk-")) && !hasDigitAndLetter(tok[3:]) {
				return m // "sk-learn-model-selection-guide" is prose, not a key
			}
			return append(m[:esc:esc], Redacted...)
		})
	}
	if rules&ruleBearer != 0 {
		b = replaceGroup(bearerRE(), b, 2, nil)
	}
	if rules&ruleAuth != 0 {
		b = replaceGroup(authRE(), b, 2, nil)
	}
	if rules&ruleURL != 0 && bytes.IndexByte(b, '@') >= 0 {
		b = replaceGroup(urlRE(), b, 2, nil)
	}
	if rules&rulePEM != 0 {
		b = replaceGroup(pemRE(), b, 2, nil)
	}
	if rules&rulePair != 0 && bytes.ContainsAny(b, ":=") {
		b = replaceGroup(pairRE(), b, 2, pairValue)
	}
	return b
}

func hasDigitAndLetter(b []byte) bool {
	var d, l bool
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			d = true
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			l = true
		}
	}
	return d && l
}

// replaceGroup replaces, in every match of re, the first of submatches g,
// g+1, … that matched with Redacted (pairRE's value has one group per
// form of quoting), or with what with says (nil: Redacted always).
func replaceGroup(re *regexp.Regexp, b []byte, g int, with func(b []byte, loc []int, k int) (string, bool)) []byte {
	locs := re.FindAllSubmatchIndex(b, -1)
	if locs == nil {
		return b
	}
	out := make([]byte, 0, len(b))
	last := 0
	for _, loc := range locs {
		k := g
		for 2*k+2 < len(loc) && loc[2*k] < 0 {
			k++
		}
		s, e := loc[2*k], loc[2*k+1]
		if s < 0 || string(b[s:e]) == Redacted {
			continue
		}
		repl := Redacted
		if with != nil {
			var ok bool
			if repl, ok = with(b, loc, k); !ok {
				continue
			}
		}
		out = append(out, b[last:s]...)
		out = append(out, repl...)
		last = e
	}
	return append(out, b[last:]...)
}

// pairValue is what replaces the value of pairRE's match loc, whose value
// is group k: Redacted, except after a JSON key ("password": 1234, or
// \"password\": 1234 quoted once more) in text that holds a JSON
// document, such as the arguments string of a tool call. There, as
// redactJSON does with a line, a number becomes the string Redacted and
// true, false and null are kept (false: nothing to replace), so that the
// document stays JSON.
func pairValue(b []byte, loc []int, k int) (string, bool) {
	const unquoted = 5 // pairRE's group of a value without quotes
	if k != unquoted {
		return Redacted, true
	}
	sep := b[loc[3]:loc[2*k]] // from the key's end to the value
	quote := ""
	switch {
	case bytes.HasPrefix(sep, []byte(`"`)):
		quote = `"`
	case bytes.HasPrefix(sep, []byte(`\"`)):
		quote = `\"`
	default:
		return Redacted, true
	}
	colon := bytes.IndexByte(sep, ':')
	if colon < 0 || bytes.ContainsAny(sep[colon:], `"'`) {
		return Redacted, true // key=value, or a quote the value did not close
	}
	switch v := b[loc[2*k]:loc[2*k+1]]; {
	case string(v) == "null" || string(v) == "true" || string(v) == "false":
		return "", false
	case (v[0] == '-' || '0' <= v[0] && v[0] <= '9') && json.Valid(v):
		return quote + Redacted + quote, true
	}
	return Redacted, true
}

// redactJSON rewrites the strings of a valid JSON document: each string's
// content is redacted as text, and a string or number value whose key
// names a secret is replaced whole (a number by the string Redacted: a PIN
// or a numeric key is a secret still). true, false and null tell nothing;
// an object or array is kept, its strings redacted as any others.
func (r *Redactor) redactJSON(line []byte) []byte {
	out := make([]byte, 0, len(line)+16)
	var lastKey []byte // the key whose value starts at valueAt
	valueAt := -1
	i := 0
	for i < len(line) {
		c := line[i]
		if i == valueAt && (c == '-' || '0' <= c && c <= '9') && secretKey(lastKey) {
			i = numberEnd(line, i)
			out = append(out, '"')
			out = append(out, Redacted...)
			out = append(out, '"')
			continue
		}
		if c != '"' {
			out = append(out, c)
			i++
			continue
		}
		end := stringEnd(line, i)
		raw := line[i : end+1] // with quotes
		// A string followed by ':' (after spaces) is a key.
		j := end + 1
		for j < len(line) && (line[j] == ' ' || line[j] == '\t' || line[j] == '\n' || line[j] == '\r') {
			j++
		}
		isKey := j < len(line) && line[j] == ':'
		if !isKey && i == valueAt && len(raw) > 2 && secretKey(lastKey) {
			out = append(out, '"')
			out = append(out, Redacted...)
			out = append(out, '"')
		} else {
			out = r.appendRedactedString(out, raw)
		}
		if isKey {
			lastKey = raw[1 : len(raw)-1]
			if bytes.IndexByte(lastKey, '\\') >= 0 {
				var k string
				if json.Unmarshal(raw, &k) == nil {
					lastKey = []byte(k)
				}
			}
			valueAt = j + 1
			for valueAt < len(line) && (line[valueAt] == ' ' || line[valueAt] == '\t' || line[valueAt] == '\n' || line[valueAt] == '\r') {
				valueAt++
			}
		}
		i = end + 1
	}
	return out
}

// numberEnd returns the index just past the JSON number that starts at
// line[start]. line is valid JSON, so the number is well formed.
func numberEnd(line []byte, start int) int {
	i := start
	for i < len(line) && strings.IndexByte("0123456789+-.eE", line[i]) >= 0 {
		i++
	}
	return i
}

// stringEnd returns the index of the closing quote of the JSON string that
// opens at line[start]. line is valid JSON, so the quote exists.
func stringEnd(line []byte, start int) int {
	for k := start + 1; k < len(line); k++ {
		switch line[k] {
		case '\\':
			k++
		case '"':
			return k
		}
	}
	return len(line) - 1
}

// appendRedactedString appends the JSON string raw (quotes included) with
// its content redacted.
func (r *Redactor) appendRedactedString(dst, raw []byte) []byte {
	content := raw[1 : len(raw)-1]
	escaped := bytes.IndexByte(content, '\\') >= 0
	if !escaped {
		rules := r.scan(content)
		if rules == 0 {
			return append(dst, raw...)
		}
		red := r.redactText(bytes.Clone(content), rules)
		dst = append(dst, '"')
		dst = append(dst, red...)
		return append(dst, '"')
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return append(dst, raw...)
	}
	rules := r.scan([]byte(s))
	if rules == 0 {
		return append(dst, raw...)
	}
	red := r.redactText([]byte(s), rules)
	if string(red) == s {
		return append(dst, raw...)
	}
	return event.AppendString(dst, string(red))
}
