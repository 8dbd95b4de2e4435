package logger

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adrg/xdg"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

var t0 = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)

func openTest(t *testing.T, dir, run string, meta Meta, opts ...Option) *Session {
	t.Helper()
	opts = append([]Option{WithRedactor(NewRedactor(testEnv))}, opts...)
	s, err := Open(dir, run, meta, opts...)
	require.NoError(t, err)
	return s
}

func readMeta(t *testing.T, dir, run string) Meta {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, run+ExtMeta))
	require.NoError(t, err)
	var m Meta
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

func TestSessionFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "sessions")
	run := "run_01JTEST0000000000000000001"
	s := openTest(t, dir, run, Meta{Agent: "claude", Model: "claude-sonnet-4-5",
		PromptPreview: strings.Repeat("é", 150) + " key sk-ant-api03-AbCdEf0123456789_xyz " + strings.Repeat("x", 100),
		Cwd:           "/work", Argv: []string{"claude", "-p", "<prompt>", "--api-key", "sk-abcdefghij0123456789ABCDEFGH"}, Start: t0})

	require.NoError(t, s.WriteEvent([]byte(`{"v":1,"type":"session_start","run":"r","seq":1,"ts":1}`+"\n")))
	require.NoError(t, s.WriteEvent([]byte(`{"v":1,"type":"text_delta","run":"r","seq":2,"ts":2,"text":"sk-abcdefghij0123456789ABCDEFGH"}`)))
	require.NoError(t, s.WriteNative(event.StreamStdout, []byte(`{"type":"system","apiKey":"abcdef"}`)))
	require.NoError(t, s.WriteNative(event.StreamStdout, []byte(`not json tok-0123456789abcdef`)))
	require.NoError(t, s.WriteNative(event.StreamStderr, []byte(`warn: using ghp_1234567890abcdefghijABCDEFGHIJ123456`)))

	t.Run("modes", func(t *testing.T) {
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		for _, ext := range []string{ExtEvents, ExtNative, ExtStderr, ExtMeta} {
			fi, err := os.Stat(filepath.Join(dir, run+ext))
			require.NoError(t, err, ext)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), ext)
		}
	})
	t.Run("events-flushed-per-line", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dir, run+ExtEvents))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		require.Len(t, lines, 2)
		for _, l := range lines {
			require.True(t, json.Valid([]byte(l)), l)
		}
		require.NotContains(t, string(data), "sk-abcdefghij")
	})
	t.Run("meta-at-open", func(t *testing.T) {
		m := readMeta(t, dir, run)
		require.Equal(t, run, m.Run)
		require.Equal(t, StatusRunning, m.Status)
		require.Equal(t, t0, m.Start.UTC())
		require.True(t, m.End.IsZero())
		require.Equal(t, PromptPreviewLen, len([]rune(m.PromptPreview)))
		require.Contains(t, m.PromptPreview, Redacted)
		require.NotContains(t, m.PromptPreview, "sk-ant")
		require.Equal(t, Redacted, m.Argv[4])
	})

	require.NoError(t, s.Close(Meta{Status: event.ResultSuccess, ExitCode: event.Int(0), SessionID: "sess-1", End: t0.Add(90 * time.Second),
		Usage: &event.Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: event.Float(0.01)}))

	t.Run("meta-rewritten-at-close", func(t *testing.T) {
		m := readMeta(t, dir, run)
		require.Equal(t, event.ResultSuccess, m.Status)
		require.Equal(t, "claude", m.Agent, "fields from Open are kept")
		require.Equal(t, "sess-1", m.SessionID)
		require.Equal(t, t0.Add(90*time.Second), m.End.UTC())
		require.Equal(t, 0, *m.ExitCode)
		require.Equal(t, int64(5), m.Usage.OutputTokens)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 4, "no temporary meta file left")
	})
	t.Run("native-redacted", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dir, run+ExtNative))
		require.NoError(t, err)
		require.Equal(t, `{"type":"system","apiKey":"[REDACTED]"}`+"\n"+"not json [REDACTED]\n", string(data))
		data, err = os.ReadFile(filepath.Join(dir, run+ExtStderr))
		require.NoError(t, err)
		require.Equal(t, "warn: using [REDACTED]\n", string(data))
	})
	t.Run("closed", func(t *testing.T) {
		require.ErrorIs(t, s.WriteEvent([]byte("{}")), ErrClosed)
		require.ErrorIs(t, s.WriteNative(event.StreamStdout, []byte("{}")), ErrClosed)
		require.ErrorIs(t, s.Close(Meta{}), ErrClosed)
	})
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("no-overwrite", func(t *testing.T) {
		t.Parallel()
		s := openTest(t, dir, "run_dup", Meta{})
		require.NoError(t, s.Close(Meta{}))
		_, err := Open(dir, "run_dup", Meta{}, WithRedactor(NewRedactor(nil)))
		require.ErrorIs(t, err, os.ErrExist)
	})
	t.Run("bad-run-id", func(t *testing.T) {
		t.Parallel()
		for _, id := range []string{"", "..", "a/b", `a\b`} {
			_, err := Open(dir, id, Meta{})
			require.Error(t, err, id)
		}
	})
	t.Run("unknown-stream", func(t *testing.T) {
		t.Parallel()
		s := openTest(t, dir, "run_stream", Meta{})
		require.Error(t, s.WriteNative("stdin", []byte("x")))
		require.NoError(t, s.Close(Meta{}))
		_, err := os.Stat(filepath.Join(dir, "run_stream"+ExtStderr))
		require.ErrorIs(t, err, os.ErrNotExist, "no stderr file without stderr lines")
	})
}

func TestSessionConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openTest(t, dir, "run_conc", Meta{Agent: "codex"})
	const writers, per = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				line := fmt.Sprintf(`{"v":1,"type":"text_delta","run":"run_conc","seq":%d,"ts":%d,"text":"w%d"}`, w*per+i, i, w)
				require.NoError(t, s.WriteEvent([]byte(line)))
				require.NoError(t, s.WriteNative(event.StreamStdout, []byte(line)))
				if i%50 == 0 {
					require.NoError(t, s.Flush())
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Close(Meta{Status: "success"}))
	for _, ext := range []string{ExtEvents, ExtNative} {
		data, err := os.ReadFile(filepath.Join(dir, "run_conc"+ext))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		require.Len(t, lines, writers*per, ext)
		for _, l := range lines {
			require.True(t, json.Valid([]byte(l)), "interleaved line %q", l)
		}
	}
}

// writeRun makes a closed run with the given event lines and times.
func writeRun(t *testing.T, dir, run string, start, end time.Time, lines ...string) {
	t.Helper()
	s := openTest(t, dir, run, Meta{Agent: "claude", Start: start})
	for _, l := range lines {
		require.NoError(t, s.WriteEvent([]byte(l)))
	}
	require.NoError(t, s.Close(Meta{Status: "success", End: end}))
}

func TestListLoadResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRun(t, dir, "run_01AAA", t0, t0.Add(time.Minute))
	writeRun(t, dir, "run_01AAB", t0.Add(time.Hour), t0.Add(2*time.Hour))
	writeRun(t, dir, "run_01BCC", t0.Add(-time.Hour), t0)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_01ZZZ"+ExtEvents), []byte("{}\n"), 0o600))

	t.Run("list-newest-first", func(t *testing.T) {
		t.Parallel()
		metas, err := List(dir)
		require.NoError(t, err)
		var ids []string
		for _, m := range metas {
			ids = append(ids, m.Run)
		}
		require.Len(t, ids, 4)
		require.Equal(t, []string{"run_01AAB", "run_01AAA", "run_01BCC"}, without(ids, "run_01ZZZ"))
	})
	t.Run("missing-dir", func(t *testing.T) {
		t.Parallel()
		metas, err := List(filepath.Join(dir, "nope"))
		require.NoError(t, err)
		require.Empty(t, metas)
	})
	t.Run("prefix", func(t *testing.T) {
		t.Parallel()
		for in, want := range map[string]string{"run_01AAA": "run_01AAA", "run_01B": "run_01BCC", "01AAB": "run_01AAB", "01Z": "run_01ZZZ"} {
			got, err := Resolve(dir, in)
			require.NoError(t, err, in)
			require.Equal(t, want, got, in)
		}
		_, err := Resolve(dir, "run_01AA")
		require.ErrorIs(t, err, ErrAmbiguous)
		_, err = Resolve(dir, "run_9")
		require.ErrorIs(t, err, ErrNotFound)
		_, err = Resolve(dir, "")
		require.ErrorIs(t, err, ErrNotFound)
	})
	t.Run("load", func(t *testing.T) {
		t.Parallel()
		m, err := Load(dir, "01BC")
		require.NoError(t, err)
		require.Equal(t, "run_01BCC", m.Run)
		require.Equal(t, "success", m.Status)
		m, err = Load(dir, "run_01ZZZ")
		require.NoError(t, err, "a run without meta still loads")
		require.Equal(t, "unknown", m.Status)
	})
}

// TestResolveExactIDWithoutListing: a whole run id is found by looking
// its files up, not by listing the directory (serve resolves one per
// request, and the listing grew with every session kept); a prefix, or a
// name that is not a plain file name, still goes by the listing, which
// finds only what is in dir. Not parallel: it counts the listings.
func TestResolveExactIDWithoutListing(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "run_01AAA", t0, t0.Add(time.Minute))
	writeRun(t, dir, "run_01AAAB", t0, t0.Add(time.Minute))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_01ZZZ"+ExtEvents), []byte("{}\n"), 0o600))
	outside := t.TempDir()
	writeRun(t, outside, "run_01OUT", t0, t0.Add(time.Minute))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "run_01DIR"+ExtMeta), 0o700))
	listings := 0
	readDir = func(name string) ([]os.DirEntry, error) { listings++; return os.ReadDir(name) }
	defer func() { readDir = os.ReadDir }()

	for _, id := range []string{"run_01AAA", "run_01AAAB", "run_01ZZZ"} {
		got, err := Resolve(dir, id)
		require.NoError(t, err)
		require.Equal(t, id, got)
		m, err := Load(dir, id)
		require.NoError(t, err)
		require.Equal(t, id, m.Run)
	}
	require.Zero(t, listings, "whole ids are looked up")

	got, err := Resolve(dir, "01ZZ")
	require.NoError(t, err)
	require.Equal(t, "run_01ZZZ", got)
	require.Equal(t, 1, listings, "a prefix is listed")
	for _, name := range []string{"../" + filepath.Base(outside) + "/run_01OUT", "run_01DIR", ".hidden", "run_01AAA/"} {
		_, err := Resolve(dir, name)
		require.ErrorIs(t, err, ErrNotFound, name)
	}
}

func without(ids []string, drop string) []string {
	var out []string
	for _, id := range ids {
		if id != drop {
			out = append(out, id)
		}
	}
	return out
}

func TestReplay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := []string{
		`{"v":1,"type":"session_start","run":"run_r","seq":1,"ts":1000}`,
		`{"v":1,"type":"text_delta","run":"run_r","seq":2,"ts":1500,"text":"a"}`,
		`{"v":1,"type":"text_delta","run":"run_r","seq":3,"ts":1500,"text":"b"}`,
		`{"v":1,"type":"result","run":"run_r","seq":4,"ts":3500}`,
	}
	writeRun(t, dir, "run_r", t0, t0)
	// Rewrite the events directly: writeRun's lines would be the same.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_r"+ExtEvents), []byte(strings.Join(lines, "\n")+"\n"), 0o600))

	type step struct {
		written int
		slept   time.Duration
	}
	for _, c := range []struct {
		name  string
		speed float64
		want  []time.Duration
	}{
		{"as-fast-as-possible", 0, nil},
		{"original-timing", 1, []time.Duration{500 * time.Millisecond, 2 * time.Second}},
		{"double-speed", 2, []time.Duration{250 * time.Millisecond, time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			var steps []step
			err := Replay(dir, "run_r", &out, c.speed, func(d time.Duration) {
				steps = append(steps, step{written: strings.Count(out.String(), "\n"), slept: d})
			})
			require.NoError(t, err)
			require.Equal(t, strings.Join(lines, "\n")+"\n", out.String())
			var slept []time.Duration
			for _, s := range steps {
				slept = append(slept, s.slept)
			}
			require.Equal(t, c.want, slept)
			if c.speed > 0 {
				// Each sleep happens after the earlier lines are out, before the next.
				require.Equal(t, []step{{1, c.want[0]}, {3, c.want[1]}}, steps)
			}
		})
	}
	t.Run("negative-speed", func(t *testing.T) {
		t.Parallel()
		require.Error(t, Replay(dir, "run_r", io.Discard, -1, nil))
	})
	t.Run("unknown-run", func(t *testing.T) {
		t.Parallel()
		require.ErrorIs(t, Replay(dir, "run_x", io.Discard, 0, nil), ErrNotFound)
	})
}

// TestReplayBoundsWaits: replay --speed 1 of a log with a forged or
// corrupted ts (9796018519087, 250 years on) slept for 250 years. Each
// wait is at most MaxReplayWait, whatever the gap and the speed, and a ts
// going backwards waits nothing.
func TestReplayBoundsWaits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := []string{
		`{"v":1,"type":"session_start","run":"run_r","seq":1,"ts":1000}`,
		`{"v":1,"type":"text_delta","run":"run_r","seq":2,"ts":9796018519087,"text":"a"}`,
		`{"v":1,"type":"text_delta","run":"run_r","seq":3,"ts":1500,"text":"b"}`,
		`{"v":1,"type":"text_delta","run":"run_r","seq":4,"ts":2000,"text":"c"}`,
		`{"v":1,"type":"result","run":"run_r","seq":5,"ts":62000}`,
	}
	writeRun(t, dir, "run_r", t0, t0)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run_r"+ExtEvents), []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	for _, c := range []struct {
		name  string
		speed float64
		want  []time.Duration
	}{
		{"original-timing", 1, []time.Duration{MaxReplayWait, 500 * time.Millisecond, MaxReplayWait}},
		{"slow-motion", 0.5, []time.Duration{MaxReplayWait, time.Second, MaxReplayWait}},
		{"fast", 100, []time.Duration{MaxReplayWait, 5 * time.Millisecond, 600 * time.Millisecond}},
		{"tiny-speed", 1e-300, []time.Duration{MaxReplayWait, MaxReplayWait, MaxReplayWait}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			var slept []time.Duration
			require.NoError(t, Replay(dir, "run_r", &out, c.speed, func(d time.Duration) { slept = append(slept, d) }))
			require.Equal(t, strings.Join(lines, "\n")+"\n", out.String())
			require.Equal(t, c.want, slept)
		})
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := t0.Add(30 * 24 * time.Hour)
	writeRun(t, dir, "run_old", t0, t0.Add(time.Minute))
	writeRun(t, dir, "run_new", now.Add(-time.Hour), now.Add(-time.Minute))
	// A run that never closed, its harness gone: its last write counts.
	me := self()
	require.NotNil(t, me, "this test needs /proc")
	s := openTest(t, dir, "run_crashed", Meta{Start: t0.Add(time.Hour), Harness: &Process{PID: 1 << 30, Start: me.Start, NS: me.NS}})
	require.NoError(t, s.WriteNative(event.StreamStderr, []byte("boom")))
	require.NoError(t, s.Flush())
	touchRun(t, dir, "run_crashed", t0.Add(2*time.Hour))

	removed, err := Prune(dir, 7*24*time.Hour, now)
	require.NoError(t, err)
	require.Equal(t, []string{"run_crashed", "run_old"}, removed)
	left, err := List(dir)
	require.NoError(t, err)
	require.Len(t, left, 1)
	require.Equal(t, "run_new", left[0].Run)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 3, "every file of a pruned run is gone")

	removed, err = Prune(dir, 0, now)
	require.NoError(t, err)
	require.Equal(t, []string{"run_new"}, removed)
	_, err = Prune(dir, -time.Second, now)
	require.Error(t, err)
}

// touchRun sets the modification time of run's files in dir to at.
func touchRun(t *testing.T, dir, run string, at time.Time) {
	t.Helper()
	for _, ext := range runExts {
		if err := os.Chtimes(Path(dir, run, ext), at, at); err != nil {
			require.ErrorIs(t, err, os.ErrNotExist)
		}
	}
}

// TestPruneRunning: a run whose harness is alive is never pruned, however
// long ago it started: 'sessions prune --older-than 1s' removed the logs
// of a run 3 s in, by its start, while its harness wrote them. A run
// that is not closed but cannot be running (its harness gone), or may not
// be (its harness not judged: no /proc, another machine), is pruned by
// the last write to its files, not by its start; a run with no meta file
// written in the last seconds is starting.
func TestPruneRunning(t *testing.T) {
	t.Parallel()
	me := self()
	require.NotNil(t, me, "this test needs /proc")
	now := time.Now()
	long := now.Add(-100 * 24 * time.Hour)
	for _, c := range []struct {
		name      string
		harness   *Process
		noMeta    bool
		lastWrite time.Time
		pruned    bool
	}{
		{name: "alive", harness: me, lastWrite: long},
		{name: "alive-writing", harness: me, lastWrite: now},
		{name: "lost-quiet", harness: &Process{PID: 1 << 30, Start: me.Start, NS: me.NS}, lastWrite: long, pruned: true},
		{name: "lost-recently", harness: &Process{PID: me.PID, Start: me.Start + 1, NS: me.NS}, lastWrite: now.Add(-time.Minute)},
		{name: "not-judged-quiet", harness: nil, lastWrite: long, pruned: true},
		{name: "not-judged-writing", harness: &Process{PID: 1 << 30, Start: 1, NS: "another-boot/pid:[1]"}, lastWrite: now.Add(-time.Minute)},
		{name: "starting", noMeta: true, lastWrite: now},
		{name: "no-meta-quiet", noMeta: true, lastWrite: long, pruned: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			run := "run_" + c.name
			if !c.noMeta {
				writeMetaFile(t, dir, Meta{Run: run, Agent: "claude", Status: StatusRunning, Start: long, Harness: c.harness})
			}
			require.NoError(t, os.WriteFile(Path(dir, run, ExtEvents), []byte("{}\n"), 0o600))
			touchRun(t, dir, run, c.lastWrite)
			age := 30 * time.Minute
			if c.lastWrite.Equal(now) {
				age = 0 // whatever the age asked for
			}
			removed, err := Prune(dir, age, now.Add(time.Second))
			require.NoError(t, err)
			if !c.pruned {
				require.Empty(t, removed)
				_, err := os.Stat(Path(dir, run, ExtEvents))
				require.NoError(t, err)
				return
			}
			require.Equal(t, []string{run}, removed)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Empty(t, entries)
		})
	}
}

func TestExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openTest(t, dir, "run_exp", Meta{Agent: "gemini", Start: t0})
	require.NoError(t, s.WriteEvent([]byte(`{"v":1,"type":"session_start","seq":1,"ts":1}`)))
	require.NoError(t, s.WriteNative(event.StreamStdout, []byte(`{"type":"init"}`)))
	require.NoError(t, s.Close(Meta{Status: "success"}))

	var buf bytes.Buffer
	require.NoError(t, Export(dir, "run_e", &buf, nil))
	zr, err := gzip.NewReader(&buf)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	got := map[string]string{}
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		got[hdr.Name] = string(data)
		names = append(names, hdr.Name)
	}
	require.Equal(t, []string{"run_exp/run_exp.meta.json", "run_exp/run_exp.ndjson", "run_exp/run_exp.native.jsonl"}, names)
	require.Equal(t, `{"type":"init"}`+"\n", got["run_exp/run_exp.native.jsonl"])
	require.Contains(t, got["run_exp/run_exp.meta.json"], `"agent": "gemini"`)
}

func TestDefaultDir(t *testing.T) {
	t.Parallel()
	for dataHome, want := range map[string]string{
		"/d": "/d/harness/sessions",
		"":   filepath.Join(xdg.DataHome, "harness", "sessions"), // unset: the platform's data dir
	} {
		env := map[string]string{"XDG_DATA_HOME": dataHome}
		require.Equal(t, want, DefaultDir(func(k string) string { return env[k] }), dataHome)
	}
	require.Equal(t, filepath.Join(xdg.DataHome, "harness", "sessions"), DefaultDir(nil))
}

// TestOpenTightensLooseDir: logs hold prompts and tool output, so a
// sessions directory others may enter is tightened, or refused when it is
// shared and not ours to change.
func TestOpenTightensLooseDir(t *testing.T) {
	t.Parallel()
	loose := filepath.Join(t.TempDir(), "sessions")
	require.NoError(t, os.Mkdir(loose, 0o755))
	require.NoError(t, os.Chmod(loose, 0o755))
	s := openTest(t, loose, "run_loose", Meta{})
	require.NoError(t, s.Close(Meta{}))
	st, err := os.Stat(loose)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())

	shared := filepath.Join(t.TempDir(), "tmp")
	require.NoError(t, os.Mkdir(shared, 0o700))
	require.NoError(t, os.Chmod(shared, 0o777|os.ModeSticky))
	_, err = Open(shared, "run_shared", Meta{}, WithRedactor(NewRedactor(nil)))
	require.ErrorContains(t, err, "open to other users")
	st, err = os.Stat(shared)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o777), st.Mode().Perm(), "a shared directory is not changed")
	_, err = os.Stat(filepath.Join(shared, "run_shared"+ExtEvents))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestMetaKeepsHarnessNames: a redacted value that equals the agent's id
// or a status does not erase them from the summary ('sessions list' and
// 'reparse' read them), while the fields others wrote are redacted.
func TestMetaKeepsHarnessNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	red := NewRedactor(nil).WithEnv([]string{"A=claude", "B=success", "C=/work/secret-project", "D=model-secret"})
	s, err := Open(dir, "run_names", Meta{Agent: "claude", Model: "model-secret", Cwd: "/work/secret-project",
		Argv: []string{"claude", "--add-dir=/work/secret-project"}, SessionID: "model-secret-session"}, WithRedactor(red))
	require.NoError(t, err)
	require.NoError(t, s.Close(Meta{Status: "success"}))
	m := readMeta(t, dir, "run_names")
	require.Equal(t, "claude", m.Agent)
	require.Equal(t, "success", m.Status)
	require.Equal(t, Redacted, m.Model)
	require.Equal(t, Redacted, m.Cwd)
	require.Equal(t, "--add-dir="+Redacted, m.Argv[1])
	require.Equal(t, Redacted+"-session", m.SessionID)
}

// TestFloodGrowsBuffers: lines are written in 64 KiB until 4 MiB came with
// no Flush between (a flood), then in 2 MiB; every line reaches the files
// whole and in order, through both sizes.
func TestFloodGrowsBuffers(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, "run_f", Meta{Agent: "claude"}, WithRedactor(NewRedactor(nil)), WithBufferedEvents())
	require.NoError(t, err)
	line := []byte(`{"text":"` + strings.Repeat("y", 1000) + `"}`)
	var want bytes.Buffer
	writes := 0
	for i := 0; s.natBuf.run < floodWrites+2; i++ {
		l := fmt.Appendf(nil, "%d %s", i, line)
		want.Write(append(l, '\n'))
		before := s.natBuf.run
		require.NoError(t, s.WriteNative(event.StreamStdout, l))
		require.NoError(t, s.WriteEvent(l))
		if s.natBuf.run != before {
			writes++
			require.Equal(t, writes >= floodWrites, s.natBuf.large, "after write %d", writes)
		}
	}
	require.True(t, s.evBuf.large)
	require.NoError(t, s.Flush())
	require.Zero(t, s.natBuf.run, "a Flush ends the run of full writes")
	require.True(t, s.natBuf.large, "the buffer stays grown")
	require.NoError(t, s.Close(Meta{}))
	for _, ext := range []string{ExtNative, ExtEvents} {
		got, err := os.ReadFile(filepath.Join(dir, "run_f"+ext))
		require.NoError(t, err)
		require.True(t, bytes.Equal(want.Bytes(), got), "%s: %d bytes, want %d", ext, len(got), want.Len())
	}
}
