package serve

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
)

// peerKey is the context key of a connection's peer uid (ConnContext).
type peerKey struct{}

// ConnContext is the http.Server.ConnContext of a Server: it notes how to
// find the connection's peer uid, looked up once, when a read without the
// token first needs it (not in the accept loop).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	local, remote := c.LocalAddr(), c.RemoteAddr()
	return context.WithValue(ctx, peerKey{}, sync.OnceValues(func() (int, bool) { return peerUID(local, remote) }))
}

// ownPeer reports whether r comes from a process of this server's own
// (effective) uid, that of the session store, which is private to it: a
// read without the token is theirs alone. Root's is not let through
// (unless the server is root's): a root without capabilities (a container
// on the host's network) may not read the store; a true root reads the
// token file. A peer whose uid is unknown needs the token. A request with
// no connection (ServeHTTP called in this process) is the process's own.
func ownPeer(r *http.Request) bool {
	ctx := r.Context()
	var uid int
	var ok bool
	if f, has := ctx.Value(peerKey{}).(func() (int, bool)); has {
		uid, ok = f()
	} else if local, has := ctx.Value(http.LocalAddrContextKey).(net.Addr); has {
		remote, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			return false
		}
		uid, ok = peerUID(local, net.TCPAddrFromAddrPort(remote))
	} else {
		return true
	}
	return ok && uid == os.Geteuid()
}
