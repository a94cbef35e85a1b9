package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// --allow-target patterns are host:port. In the host, * matches any run of
// characters within one DNS label and never a dot, as in TLS certificate
// names: kafka-*.internal matches kafka-1.internal, not
// kafka-1.evil.internal, and kafka-* never reaches kafka-x.attacker.example.
// (path.Match, used before, let * cross dots.) IPv4 addresses match label by
// label too (10.0.0.*), IPv6 addresses only exactly ([::1]:9092). The port
// is a number, or * for any port. Names compare case-insensitively.

// targetPattern is one compiled --allow-target pattern.
type targetPattern struct {
	// labels is the host name or IPv4 address split at dots, lower case,
	// with * wildcards; nil for an IPv6 pattern.
	labels []string
	ip6    netip.Addr // the IPv6 address of an IPv6 pattern
	port   int        // 0: any port
}

// target is one parsed bootstrap server.
type target struct {
	labels []string // as in targetPattern; nil for an IPv6 address
	ip6    netip.Addr
	port   int
}

// compileTargetPattern parses an --allow-target pattern.
func compileTargetPattern(p string) (targetPattern, error) {
	host, port, err := net.SplitHostPort(strings.TrimSpace(p))
	if err != nil {
		return targetPattern{}, fmt.Errorf("must be host:port, e.g. kafka-*.internal:9093: %w", unwrapAddrError(err))
	}
	var tp targetPattern
	if port != "*" {
		if tp.port, err = parsePort(port); err != nil {
			return targetPattern{}, fmt.Errorf("port %w, or * for any port", err)
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		tp.labels, tp.ip6 = ipLabels(ip)
		return tp, nil
	}
	if strings.Contains(host, ":") {
		return targetPattern{}, fmt.Errorf("%q is not an IPv6 address (IPv6 patterns take no wildcards)", host)
	}
	if tp.labels, err = splitName(host, true); err != nil {
		return targetPattern{}, err
	}
	return tp, nil
}

// parseTarget parses a bootstrap server as the client will dial it. A
// string that is not a well-formed host:port (kafka-x:80:9092, :9092, a
// port out of range, characters no host name has) is an error.
func parseTarget(addr string) (target, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return target{}, unwrapAddrError(err)
	}
	var t target
	if t.port, err = parsePort(port); err != nil {
		return target{}, fmt.Errorf("port %w", err)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		t.labels, t.ip6 = ipLabels(ip)
		return t, nil
	}
	if t.labels, err = splitName(host, false); err != nil {
		return target{}, err
	}
	return t, nil
}

// match reports whether t is allowed by the pattern.
func (p targetPattern) match(t target) bool {
	if p.port != 0 && p.port != t.port {
		return false
	}
	if p.labels == nil || t.labels == nil {
		return p.labels == nil && t.labels == nil && p.ip6 == t.ip6
	}
	if len(p.labels) != len(t.labels) {
		return false
	}
	for i := range p.labels {
		if !labelMatch(p.labels[i], t.labels[i]) {
			return false
		}
	}
	return true
}

// labelMatch matches one label against a pattern label in which * stands
// for any run of characters. A label holds no dot, so neither can *.
func labelMatch(pattern, s string) bool {
	if strings.Contains(s, ".") {
		return false
	}
	star, resume := -1, 0 // last * in pattern, and where in s its match ends
	pi, si := 0, 0
	for si < len(s) {
		switch {
		case pi < len(pattern) && pattern[pi] == '*':
			star, resume = pi, si
			pi++
		case pi < len(pattern) && pattern[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			// Let the last * take one more character and try again.
			resume++
			pi, si = star+1, resume
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}

// ipLabels returns an IPv4 address (also one written as IPv4-mapped IPv6)
// as labels, an IPv6 address as itself.
func ipLabels(ip netip.Addr) ([]string, netip.Addr) {
	ip = ip.Unmap()
	if ip.Is4() {
		return strings.Split(ip.String(), "."), netip.Addr{}
	}
	return nil, ip
}

// splitName checks a host name (letters, digits, - and _, non-empty labels
// of at most 63 characters, at most 253 in all) and returns its labels in
// lower case; wildcard allows * within labels.
func splitName(host string, wildcard bool) ([]string, error) {
	if host == "" {
		return nil, errors.New("the host is empty")
	}
	if len(host) > 253 {
		return nil, errors.New("the host name is longer than 253 characters")
	}
	labels := strings.Split(strings.ToLower(host), ".")
	for _, l := range labels {
		if l == "" {
			return nil, fmt.Errorf("%q has an empty label (two dots, or a dot at an end)", host)
		}
		if len(l) > 63 {
			return nil, fmt.Errorf("%q has a label longer than 63 characters", host)
		}
		for _, c := range l {
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			case c == '*' && wildcard:
			case wildcard && (c == '?' || c == '[' || c == ']'):
				return nil, fmt.Errorf("%q: only * is a wildcard (it matches within one label)", host)
			default:
				return nil, fmt.Errorf("%q is not a host name: %q is not allowed in one", host, c)
			}
		}
	}
	return labels, nil
}

// parsePort parses a TCP port: decimal digits, 1 to 65535.
func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q must be a number from 1 to 65535", s)
	}
	return n, nil
}

// unwrapAddrError drops net.AddrError's repetition of the address.
func unwrapAddrError(err error) error {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return errors.New(ae.Err)
	}
	return err
}

// compileTargetPatterns compiles every --allow-target pattern; the error
// names the pattern.
func compileTargetPatterns(patterns []string) ([]targetPattern, error) {
	out := make([]targetPattern, 0, len(patterns))
	for _, p := range patterns {
		tp, err := compileTargetPattern(p)
		if err != nil {
			return nil, fmt.Errorf("--allow-target %q: %w", p, err)
		}
		out = append(out, tp)
	}
	return out, nil
}

// checkTargets refuses a spec's bootstrap servers unless each is a
// well-formed host:port that an --allow-target pattern matches.
func (s *Server) checkTargets(addrs []string) error {
	for _, addr := range addrs {
		t, err := parseTarget(addr)
		if err != nil {
			return badInput("bootstrap-server", "%q is not a valid host:port address: %v", addr, err)
		}
		allowed := false
		for _, p := range s.allowTargets {
			if p.match(t) {
				allowed = true
				break
			}
		}
		if !allowed {
			return badInput("bootstrap-server", "%s is not an allowed target; start kbench serve with --allow-target '%s' to allow it", addr, addr)
		}
	}
	return nil
}

// storedTargetsAllowed checks a stored run's spec against today's
// --allow-target patterns. A spec that does not parse is left to the queue,
// which fails the run saying so.
func (s *Server) storedTargetsAllowed(specJSON string) error {
	var file rundoc.SpecFile
	if err := json.Unmarshal([]byte(specJSON), &file); err != nil {
		return nil
	}
	spec, err := rundoc.SpecFromParams(file.Workload, file.Params, s.validate)
	if err != nil {
		return nil
	}
	return s.checkTargets(spec.Targets())
}

// StoredTargetsAllowed returns kbench serve's check of a stored run's spec
// against its --allow-target patterns, specs read with validate
// (runner.Validate): the lifecycle's Recheck of the runs a previous
// process left queued, which the serve command builds before the server.
func StoredTargetsAllowed(patterns []string, validate rundoc.Check) (func(spec string) error, error) {
	compiled, err := compileTargetPatterns(patterns)
	if err != nil {
		return nil, err
	}
	s := &Server{allowTargets: compiled, validate: validate}
	return s.storedTargetsAllowed, nil
}

// TargetsAllowed returns the check of a stored run's spec against the
// --allow-target patterns of a kbench worker, which applies it before it
// executes a run: the server that queued the run checked its own. Specs
// are read with validate (runner.Validate).
func TargetsAllowed(patterns []string, validate rundoc.Check) (func(spec string) error, error) {
	check, err := StoredTargetsAllowed(patterns, validate)
	if err != nil {
		return nil, err
	}
	return func(spec string) error {
		if err := check(spec); err != nil {
			// The worker's own flag is the one to change.
			return errors.New(strings.ReplaceAll(err.Error(), "start kbench serve with", "start kbench worker with"))
		}
		return nil
	}, nil
}
