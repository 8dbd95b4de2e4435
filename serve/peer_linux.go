//go:build linux

package serve

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"strconv"
)

// peerUID returns the uid that owns the other end of a TCP connection on
// this machine, local and remote being the connection's addresses as this
// end sees them: the uid column of the row of /proc/net/tcp (or tcp6)
// whose local address is remote and whose remote address is local. ok is
// false when there is no such row (the peer is on another machine, or
// closed its socket) or it cannot be read.
func peerUID(local, remote net.Addr) (uid int, ok bool) {
	l, lok := addrPort(local)
	r, rok := addrPort(remote)
	if !lok || !rok {
		return -1, false
	}
	files := []string{"/proc/net/tcp6"}
	if r.Addr().Is4() {
		// A socket of AF_INET6 may hold a v4 connection (::ffff:a.b.c.d).
		files = []string{"/proc/net/tcp", "/proc/net/tcp6"}
	}
	for _, name := range files {
		if uid, ok := findSocket(name, r, l); ok {
			return uid, true
		}
	}
	return -1, false
}

// addrPort is a TCP address without its zone, a v4-mapped one as v4.
func addrPort(a net.Addr) (netip.AddrPort, bool) {
	var ap netip.AddrPort
	if t, ok := a.(*net.TCPAddr); ok {
		ap = t.AddrPort()
	} else if a != nil {
		p, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return ap, false
		}
		ap = p
	}
	return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port()), ap.IsValid()
}

// findSocket reads the table name for the socket of local and remote, and
// returns its uid. A row with no inode (a socket its process closed, kept
// in TIME_WAIT or FIN_WAIT, which shows uid 0) is no one's.
func findSocket(name string, local, remote netip.AddrPort) (int, bool) {
	f, err := os.Open(name)
	if err != nil {
		return -1, false
	}
	defer f.Close()
	sc := bufio.NewScanner(bufio.NewReaderSize(f, 64<<10))
	sc.Scan() // the header
	for sc.Scan() {
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
		fs := bytes.Fields(sc.Bytes())
		if len(fs) < 10 {
			continue
		}
		if l, ok := procAddr(fs[1]); !ok || l != local {
			continue
		}
		if r, ok := procAddr(fs[2]); !ok || r != remote {
			continue
		}
		if string(fs[9]) == "0" {
			continue
		}
		uid, err := strconv.Atoi(string(fs[7]))
		if err != nil {
			return -1, false
		}
		return uid, true
	}
	return -1, false
}

// procAddr decodes an address of /proc/net/tcp{,6}: the IP as 32-bit
// words each printed in hex in the kernel's byte order, ":", the port in
// hex.
func procAddr(b []byte) (netip.AddrPort, bool) {
	ipHex, portHex, ok := bytes.Cut(b, []byte(":"))
	if !ok || len(ipHex) != 8 && len(ipHex) != 32 {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(string(portHex), 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	var raw [16]byte
	ip := raw[:len(ipHex)/2]
	if _, err := hex.Decode(ip, ipHex); err != nil {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(ip); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(ip[i:]))
	}
	addr, _ := netip.AddrFromSlice(ip)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), true
}
