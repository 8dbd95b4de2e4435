package serve_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/config"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/serve"
)

func init() {
	fakeagent.Register("serve-gated", gated)
	fakeagent.Register("serve-lines", lines)
}

func TestMain(m *testing.M) { harnesstest.Main(m) }

const sessionID = "5e55e55e-0000-4000-8000-000000000001"

func emit(obj string) { os.Stdout.WriteString(obj + "\n") }

func claudeInit() {
	emit(`{"type":"system","subtype":"init","cwd":"/tmp/work","session_id":"` + sessionID + `","tools":["Bash","Write"],"model":"fake-model"}`)
}

func claudeText(id, text string) {
	emit(`{"type":"assistant","message":{"id":"` + id + `","role":"assistant","content":[{"type":"text","text":` + strconv.Quote(text) + `}],"usage":{"input_tokens":100,"output_tokens":20}},"session_id":"` + sessionID + `"}`)
}

func claudeTool(id, command string) {
	emit(`{"type":"assistant","message":{"id":"msg_tool_` + id + `","role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":` + strconv.Quote(command) + `}}]},"session_id":"` + sessionID + `"}`)
}

func claudeToolResult(id, out string) {
	emit(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + strconv.Quote(out) + `,"is_error":false}]},"session_id":"` + sessionID + `"}`)
}

func claudeResult(text string) {
	emit(fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"result":%q,"session_id":%q,"num_turns":2,"duration_ms":40,"total_cost_usd":0.0021,"usage":{"input_tokens":200,"output_tokens":40}}`, text, sessionID))
}

// gated: a run that says something, opens a tool call, and waits for the
// file $SERVE_TEST_GATE before it closes the call and ends, so a test
// sees the run live for as long as it needs.
func gated([]string) int {
	claudeInit()
	emit(`{"type":"assistant","message":{"id":"msg_0","role":"assistant","content":[{"type":"thinking","thinking":"The user wants a listing.","signature":"x"}]},"session_id":"` + sessionID + `"}`)
	claudeText("msg_1", "Let me look at the tree first.")
	claudeTool("toolu_1", "ls -la")
	gate := os.Getenv("SERVE_TEST_GATE")
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(gate); err == nil {
			break
		}
	}
	claudeToolResult("toolu_1", "total 0\ndrwxr-xr-x 2 u u 40 .\n")
	n, _ := strconv.Atoi(os.Getenv("SERVE_TEST_LINES"))
	for i := range n {
		claudeText("msg_n"+strconv.Itoa(i), "more "+strconv.Itoa(i))
	}
	claudeText("msg_2", "The tree is empty. Done.")
	claudeResult("The tree is empty. Done.")
	return 0
}

// lines N: N text messages, then the result.
func lines([]string) int {
	n, _ := strconv.Atoi(os.Getenv("SERVE_TEST_LINES"))
	claudeInit()
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for i := range n {
		fmt.Fprintf(w, `{"type":"assistant","message":{"id":"msg_%d","role":"assistant","content":[{"type":"text","text":"line %d"}]},"session_id":%q}`+"\n", i, i, sessionID)
	}
	w.Flush()
	claudeResult("done")
	return 0
}

// fixture is a server on a private session store, its runs fake agents.
type fixture struct {
	srv   *serve.Server
	http  *httptest.Server
	dir   string
	bench string
	gate  string
	api   harnesstest.ServeAPI
}

func newFixture(t *testing.T, fake string, env ...string) *fixture {
	return newFixtureWith(t, fake, nil, env...)
}

func newFixtureWith(t *testing.T, fake string, tune func(*serve.Config), env ...string) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{dir: filepath.Join(root, "sessions"), bench: filepath.Join(root, "bench"), gate: filepath.Join(root, "gate")}
	const token = "test-token-0123456789abcdef"
	argv, fenv := fakeagent.Command(fake)
	fenv = append(fenv, "SERVE_TEST_GATE="+f.gate)
	fenv = append(fenv, env...)
	cfg := serve.Config{
		Dir: f.dir, Bench: serve.DirStore{Dir: f.bench}, Token: token, Open: true,
		Launcher: serve.Launcher{Settings: fakeSettings(f.dir, argv[0], fenv)},
	}
	if tune != nil {
		tune(&cfg)
	}
	f.srv = serve.New(cfg)
	f.http = httptest.NewServer(f.srv)
	f.api = harnesstest.ServeAPI{URL: f.http.URL, Token: token}
	t.Cleanup(func() {
		os.WriteFile(f.gate, nil, 0o600) // let a gated run end
		f.http.Close()
		f.srv.Close()
	})
	return f
}

func (f *fixture) openGate(t *testing.T) { require.NoError(t, os.WriteFile(f.gate, nil, 0o600)) }

// start starts a run through the API and returns its id.
func (f *fixture) start(t *testing.T) string {
	t.Helper()
	return f.api.Start(t, `{"agent":"claude","prompt":"look around","cwd":`+strconv.Quote(t.TempDir())+`}`).Run
}

// sse is one message of an event stream.
type sse struct {
	id, event, data string
}

// readSSE reads messages from r until fn returns false or the stream ends.
func readSSE(t *testing.T, r io.Reader, fn func(sse) bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	var m sse
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if m.data != "" || m.event != "" {
				if !fn(m) {
					return
				}
			}
			m = sse{}
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			m.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			m.data = line[6:]
		case strings.HasPrefix(line, ":"):
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
}

func (f *fixture) logOf(t *testing.T, run string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, run+".ndjson"))
	require.NoError(t, err)
	return string(b)
}

// fakeSettings are library settings whose every agent is the fake binary,
// started from env, with small budgets and session logs in dir.
func fakeSettings(dir, binary string, env []string) *harness.Settings {
	cfg := config.Defaults()
	cfg.IdleTimeout, cfg.Timeout = config.Duration(time.Minute), config.Duration(2*time.Minute)
	cfg.Linger, cfg.KillGrace = config.Duration(time.Second), config.Duration(time.Second)
	cfg.Agents = map[string]config.AgentConfig{}
	for _, a := range harness.Adapters() {
		cfg.Agents[a.Name()] = config.AgentConfig{Binary: binary}
	}
	return &harness.Settings{Config: &cfg, Environ: env, LogDir: dir}
}
