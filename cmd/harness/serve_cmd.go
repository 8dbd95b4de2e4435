package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/httplimit"
	"github.com/agentharness/harness/mcpserver"
	"github.com/agentharness/harness/serve"
)

// serveCmd serves the HTTP API and the live web view (docs/serve.md).
type serveCmd struct {
	Listen    string `help:"Address to listen on. One that is not loopback needs --token-file." default:"127.0.0.1:7777" placeholder:"HOST:PORT"`
	TokenFile string `help:"File holding the bearer token that starting and cancelling runs need (and every request, off loopback). Created with a fresh token when missing." type:"path"`
	otlpFlags `embed:""`
}

// serveContext is what serve runs under until a signal ends it; tests
// replace it to stop the server.
var serveContext = context.Background

func (c *serveCmd) Run(e *env) error {
	s, err := loadSettings(e, "")
	if err != nil {
		return err
	}
	token, err := c.token(e.Stderr)
	if err != nil {
		return err
	}
	open := serve.IsLoopback(c.Listen)
	if !open && token == "" {
		return usageErrorf("serve: --listen %s is not a loopback address: give --token-file so that only holders of the token can read and start runs", c.Listen)
	}
	lib := s.library(e, false)
	lib.LogDir = s.logDir(e) // the server reads what its runs write
	stopOTLP, err := c.otlpFlags.start(e, s, lib)
	if err != nil {
		return err
	}
	defer stopOTLP()
	srv := serve.New(serve.Config{
		Dir:   lib.LogDir,
		Bench: &bench.Store{Dir: bench.StoreDir()},
		Token: token,
		Open:  open,
		Launcher: serve.Launcher{Settings: lib, AttachMock: func(t *harness.Task, scenario string) (func(), error) {
			return attachMock(t, scenario, false, nil) // a throwaway home for each run, as bench's
		}},
	})
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return usageErrorf("serve: %v", err)
	}
	// A channel, not NotifyContext: the signals after the first must still
	// be heard (and not take their default action) while the runs end.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	ctx := serveContext()
	// The requests' own context, not ctx: at a shutdown the streams of the
	// runs go on to their results (srv.Close), and are cut only later.
	base, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	lim := httplimit.Defaults()
	hs := httplimit.Server(srv, lim)
	hs.BaseContext = func(net.Listener) context.Context { return base }
	hs.ConnContext = serve.ConnContext // a peer's uid, looked up once per connection
	ln = httplimit.Listener(ln, lim.MaxConns)
	fmt.Fprintf(e.Stderr, "harness serve: http://%s/\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-sigs:
	case <-ctx.Done():
	}
	// The runs this server started are interrupted, and their logs closed,
	// before it exits (srv.Close kills those that outlive their grace);
	// meanwhile their streams go on to their results, and end. Any further
	// signal kills the runs at once, as a second Ctrl-C does to harness run.
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		shutdown(hs, closed, cut)
		<-closed
	}()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-sigs:
			srv.Kill()
		}
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return withStatus(exitAgentFailed, fmt.Errorf("serve: %w", err))
	}
	return nil
}

// Once the runs ended (closed), the streams still open, those of clients
// reading slowly, get streamDrain to end, then are cut (a reconnect line),
// and the shutdown waits streamCut more for them to write it.
const (
	streamDrain = 5 * time.Second
	streamCut   = time.Second
)

// shutdown stops hs, which waits for its streams: cut ends those still
// open streamDrain after closed is, and hs stops waiting streamCut later.
func shutdown(hs *http.Server, closed <-chan struct{}, cut context.CancelFunc) {
	ctx, giveUp := context.WithCancel(context.Background())
	defer giveUp()
	go func() {
		select {
		case <-closed:
		case <-ctx.Done():
			return
		}
		t := time.NewTimer(streamDrain)
		defer t.Stop()
		select {
		case <-t.C:
			cut()
		case <-ctx.Done():
			return
		}
		t.Reset(streamCut)
		select {
		case <-t.C:
			giveUp()
		case <-ctx.Done():
		}
	}()
	_ = hs.Shutdown(ctx)
}

// token reads --token-file, creating it (0600, a fresh token) when it does
// not exist; no file is no token. A file others may write is refused.
func (c *serveCmd) token(stderr io.Writer) (string, error) {
	if c.TokenFile == "" {
		return "", nil
	}
	tok, err := readTokenFile("serve", c.TokenFile, stderr)
	if errors.Is(err, os.ErrNotExist) {
		var raw [32]byte
		rand.Read(raw[:])
		tok := hex.EncodeToString(raw[:])
		// O_EXCL: a file made meanwhile is not ours to overwrite (its mode
		// may let others read the token), and a dangling link is not
		// followed to make a file wherever it points.
		f, err := os.OpenFile(c.TokenFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = f.WriteString(tok + "\n")
			err = errors.Join(err, f.Close())
		}
		if st, lerr := os.Lstat(c.TokenFile); errors.Is(err, os.ErrExist) && lerr == nil && st.Mode()&os.ModeSymlink != 0 {
			return "", usageErrorf("serve: --token-file %s: a link to no file (a token file is not made where a link points)", c.TokenFile)
		}
		if err != nil {
			return "", usageErrorf("serve: --token-file: %v", err)
		}
		return tok, nil
	}
	var se *exitError
	if errors.As(err, &se) {
		return "", err
	}
	if err != nil {
		return "", usageErrorf("serve: --token-file: %v", err)
	}
	if err := mcpserver.CheckToken(tok); err != nil {
		return "", usageErrorf("serve: --token-file %s: %v", c.TokenFile, err)
	}
	return tok, nil
}
