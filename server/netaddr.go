package server

import (
	"net"
	"net/netip"
	"strings"
)

// isLoopbackHost reports whether host (no port, IPv6 without brackets) is
// a loopback address or the name localhost. Any other name may resolve
// anywhere, so it is not loopback whatever it looks like (127.evil.example).
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// IsLoopbackAddr reports whether host:port listens on loopback only; main
// refuses other addresses without a token.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopbackHost(host)
}

// hostName is the name part of a Host header: the port dropped, IPv6
// brackets removed, lower case (DNS names are case-insensitive).
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return strings.ToLower(host)
}
