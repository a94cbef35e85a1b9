package server

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/targets"
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

// compileAllowHosts checks the --allow-host names and returns them as the
// set checkHost looks names up in: lower case, IP addresses in canonical
// form, no port.
func compileAllowHosts(names []string) (map[string]bool, error) {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		key, err := allowHostKey(n)
		if err != nil {
			return nil, fmt.Errorf("--allow-host %q: %w", n, err)
		}
		set[key] = true
	}
	return set, nil
}

// allowHostKey checks one --allow-host value: an IP address (IPv6 with or
// without brackets) or a host name, without port or wildcard.
func allowHostKey(name string) (string, error) {
	name = strings.TrimSpace(name)
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		name = name[1 : len(name)-1]
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		return ip.Unmap().String(), nil
	}
	if _, _, err := net.SplitHostPort(name); err == nil {
		return "", errors.New("give the host name without a port: the port is not checked")
	}
	if strings.Contains(name, "*") {
		return "", errors.New("wildcards are not accepted: list each name")
	}
	if err := targets.CheckName(name); err != nil {
		return "", err
	}
	return strings.ToLower(name), nil
}

// checkHost guards a loopback server without a token against DNS
// rebinding: a web page on attacker.example can point its own name at
// 127.0.0.1, and the browser then treats this server as that page's own
// origin (Origin and Host agree, so cross-origin checks pass). The one
// thing it cannot change is the Host it sends, so only loopback names and
// --allow-host names are answered. With a token, the token protects.
func (s *Server) checkHost(c *gin.Context) {
	if !s.cfg.Loopback || s.cfg.Token != "" {
		c.Next()
		return
	}
	name := hostName(c.Request.Host)
	if isLoopbackHost(name) || s.allowHosts[canonicalHost(name)] {
		c.Next()
		return
	}
	const why = "this kbench server listens on loopback without a token, so it answers only localhost and loopback addresses (a guard against DNS rebinding)"
	msg := fmt.Sprintf("Host %q refused: %s. To reach it by another name, start kbench serve with --allow-host NAME (or set a --token).", c.Request.Host, why)
	if _, err := allowHostKey(name); name != "" && err == nil {
		msg = fmt.Sprintf("Host %q refused: %s. To use this name, start kbench serve with --allow-host %s (or set a --token).", name, why, name)
	}
	s.forbid(c, msg)
}

// canonicalHost is a Host name as compileAllowHosts keys it.
func canonicalHost(name string) string {
	if ip, err := netip.ParseAddr(name); err == nil {
		return ip.Unmap().String()
	}
	return name
}
