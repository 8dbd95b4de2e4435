//go:build linux

package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// accept returns both ends of a connection to ln, dialed by this process.
func accept(t *testing.T, ln net.Listener, addr string) (server, client net.Conn) {
	t.Helper()
	client, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { client.Close() })
	server, err = ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { server.Close() })
	return server, client
}

// TestPeerUIDOwn: a connection this process made, over IPv4, IPv6, and
// IPv4 to a dual-stack listener (the server's socket in tcp6 as
// ::ffff:127.0.0.1, the client's in tcp), is found with our uid.
func TestPeerUIDOwn(t *testing.T) {
	for _, tc := range []struct{ listen, dial string }{
		{"127.0.0.1:0", ""}, {"[::1]:0", ""}, {"[::]:0", "127.0.0.1"},
	} {
		ln, err := net.Listen("tcp", tc.listen)
		if err != nil {
			t.Logf("%s: %v (skipped)", tc.listen, err)
			continue
		}
		defer ln.Close()
		addr := ln.Addr().String()
		if tc.dial != "" {
			addr = net.JoinHostPort(tc.dial, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		}
		server, client := accept(t, ln, addr)
		uid, ok := peerUID(server.LocalAddr(), server.RemoteAddr())
		require.True(t, ok, tc.listen)
		require.Equal(t, os.Geteuid(), uid, tc.listen)
		// The addresses as strings (a request's RemoteAddr) do as well.
		uid, ok = peerUID(stringAddr(server.LocalAddr().String()), stringAddr(server.RemoteAddr().String()))
		require.True(t, ok, tc.listen)
		require.Equal(t, os.Geteuid(), uid, tc.listen)

		// A peer that closed its socket is no one's, not root's.
		client.Close()
		require.Eventually(t, func() bool {
			_, ok := peerUID(server.LocalAddr(), server.RemoteAddr())
			return !ok
		}, 5*time.Second, 10*time.Millisecond, tc.listen)
	}
}

// stringAddr is a net.Addr known by its string only.
type stringAddr string

func (a stringAddr) Network() string { return "tcp" }
func (a stringAddr) String() string  { return string(a) }

// TestPeerUIDNone: an address with no socket, and no TCP address, have
// no peer uid.
func TestPeerUIDNone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	server, _ := accept(t, ln, ln.Addr().String())
	_, ok := peerUID(server.LocalAddr(), &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
	require.False(t, ok)
	_, ok = peerUID(nil, server.RemoteAddr())
	require.False(t, ok)
	_, ok = peerUID(&net.UnixAddr{Name: "/x", Net: "unix"}, server.RemoteAddr())
	require.False(t, ok)
}

// TestProcAddr: the kernel's hex of an address, words in its byte order.
func TestProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000000000000000000001000000:0050": "[::1]:80",
		"0000000000000000FFFF00000100007F:1F90": "127.0.0.1:8080",
		"0000000000000000FFFF0000:1F90":         "",
		"0100007F:XYZ":                          "",
		"0100007F":                              "",
	} {
		got, ok := procAddr([]byte(in))
		if want == "" {
			require.False(t, ok, in)
			continue
		}
		require.True(t, ok, in)
		require.Equal(t, netip.MustParseAddrPort(want), got, in)
	}
}

// The test binary as a client of another uid (TestPeerUIDChild): it
// dials the address $SERVE_PEER_TEST_DIAL holds, prints "dialed", and
// holds the connection until EOF on stdin; or it GETs the URL of
// $SERVE_PEER_TEST_GET and prints the status.
const (
	peerDialEnv = "SERVE_PEER_TEST_DIAL"
	peerGetEnv  = "SERVE_PEER_TEST_GET"
)

func TestPeerUIDChild(t *testing.T) {
	addr, url := os.Getenv(peerDialEnv), os.Getenv(peerGetEnv)
	switch {
	case addr != "":
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("dialed", c.LocalAddr())
		io.Copy(io.Discard, os.Stdin)
	case url != "":
		resp, err := http.Get(url)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		resp.Body.Close()
		fmt.Println("status", resp.StatusCode)
	default:
		t.Skip("the client of another uid of the tests below")
	}
	os.Exit(0)
}

// otherUser is a uid that is not ours, and its gid.
const otherUser = 65534

// asOtherUser starts the test binary as otherUser
// (syscall.Credential), with env added, and returns the first line it
// prints; it runs until the test ends.
func asOtherUser(t *testing.T, env ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process of another uid")
	}
	exe, err := os.Open("/proc/self/exe")
	require.NoError(t, err)
	defer exe.Close()
	// Run through the descriptor: the test binary, and any copy of it in
	// the suite's TMPDIR, lie in directories (0700) the other user cannot
	// enter, and exec of a /proc/self/fd link does not walk them.
	cmd := exec.Command("/proc/self/fd/3", "-test.run=^TestPeerUIDChild$", "-test.count=1")
	cmd.ExtraFiles = []*os.File{exe}
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUser, Gid: otherUser}}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, out)
	return strings.TrimSpace(line)
}

// TestPeerUIDOtherUser: a connection made by a process of another uid is
// found with that uid, not ours (whose is the server's end of it).
func TestPeerUIDOtherUser(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	line := asOtherUser(t, peerDialEnv+"="+ln.Addr().String())
	require.True(t, strings.HasPrefix(line, "dialed "), line)
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()
	uid, ok := peerUID(server.LocalAddr(), server.RemoteAddr())
	require.True(t, ok)
	require.Equal(t, otherUser, uid)
}

// TestOwnPeer: ownPeer lets through this process's connections, with
// ConnContext or without it, and a request with no connection; not
// another uid's.
func TestOwnPeer(t *testing.T) {
	got := make(chan bool, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- ownPeer(r) })
	h(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	require.True(t, <-got, "no connection")

	plain := httptest.NewServer(h)
	defer plain.Close()
	withCtx := httptest.NewUnstartedServer(h)
	withCtx.Config.ConnContext = ConnContext
	withCtx.Start()
	defer withCtx.Close()
	for _, srv := range []*httptest.Server{plain, withCtx} {
		resp, err := http.Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
		require.True(t, <-got, "our own uid")
	}
	for _, srv := range []*httptest.Server{plain, withCtx} {
		require.Equal(t, "status 200", asOtherUser(t, peerGetEnv+"="+srv.URL))
		require.False(t, <-got, "another uid")
	}
}
