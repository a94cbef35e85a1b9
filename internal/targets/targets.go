// Package targets is the --allow-target policy of kbench serve and kbench
// worker: which Kafka bootstrap servers a run may reach besides the
// embedded broker. A Policy is parsed once from the flag's patterns
// (Parse, so a bad pattern stops the command before it opens anything) and
// handed as data to whoever checks runs: the server when it validates a
// submitted run, serve's lifecycle when it requeues runs at start, and a
// worker just before it executes one.
//
// Patterns are host:port. In the host, * matches any run of characters
// within one DNS label and never a dot, as in TLS certificate names:
// kafka-*.internal matches kafka-1.internal, not kafka-1.evil.internal, and
// kafka-* never reaches kafka-x.attacker.example. (path.Match, used
// before, let * cross dots.) IPv4 addresses match label by label too
// (10.0.0.*), IPv6 addresses only exactly ([::1]:9092). The port is a
// number, or * for any port. Names compare case-insensitively.
//
// Its refusals name no command: each caller knows which command's flag
// would allow a target and says so. It imports only the standard library
// and the run contract (rundoc), whose stored specs it reads: no engine,
// store or HTTP, so the worker and the server can share it without either
// importing the other.
package targets

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

// Policy is a parsed set of --allow-target patterns. A nil *Policy allows
// no target (only the embedded broker, which has none). It never changes
// after Parse, so it is safe for concurrent use.
type Policy struct {
	patterns []targetPattern
}

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

// Parse compiles the values of --allow-target. The error names the flag
// and the bad pattern, never a command: the caller prefixes its own name.
// No patterns give nil, which allows no target.
func Parse(patterns []string) (*Policy, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	p := &Policy{patterns: make([]targetPattern, 0, len(patterns))}
	for _, s := range patterns {
		tp, err := compileTargetPattern(s)
		if err != nil {
			return nil, fmt.Errorf("--allow-target %q: %w", s, err)
		}
		p.patterns = append(p.patterns, tp)
	}
	return p, nil
}

// Error is Allows's refusal of one bootstrap server: either it is not a
// well-formed host:port (Malformed says why), or no pattern allows it.
type Error struct {
	Addr string
	// Malformed is why Addr is not a host:port; nil when it is one that
	// no pattern allows.
	Malformed error
}

// Error says what is wrong with the address and names no command; a
// caller that knows which flag to change adds that (NotAllowed).
func (e *Error) Error() string {
	if e.Malformed != nil {
		return fmt.Sprintf("%q is not a valid host:port address: %v", e.Addr, e.Malformed)
	}
	return e.Addr + " is not an allowed target"
}

// Unwrap returns Malformed.
func (e *Error) Unwrap() error { return e.Malformed }

// NotAllowed returns the address of err's refusal when it is a
// well-formed host:port that no pattern allows (the case in which
// starting the command with --allow-target ADDR would allow it), and
// false for any other error or nil.
func NotAllowed(err error) (addr string, ok bool) {
	var e *Error
	if errors.As(err, &e) && e.Malformed == nil {
		return e.Addr, true
	}
	return "", false
}

// Explain adds to a refusal of Allows or AllowsStored how to lift it:
// for an address command's --allow-target would allow, "; start COMMAND
// with --allow-target 'ADDR' to allow it". Other errors (and nil) come
// back as they are. Serve's checks and the worker's word it alike.
func Explain(err error, command string) error {
	if addr, ok := NotAllowed(err); ok {
		return fmt.Errorf("%w; start %s with --allow-target '%s' to allow it", err, command, addr)
	}
	return err
}

// Allows returns nil when every one of addrs (a spec's bootstrap servers,
// rundoc.Spec.Targets) is a well-formed host:port that a pattern matches,
// else an *Error for the first that is not.
func (p *Policy) Allows(addrs []string) error {
	for _, addr := range addrs {
		t, err := parseTarget(addr)
		if err != nil {
			return &Error{Addr: addr, Malformed: err}
		}
		if !p.match(t) {
			return &Error{Addr: addr}
		}
	}
	return nil
}

// AllowsStored checks a stored run's spec (the JSON of a rundoc.SpecFile)
// as Allows does its bootstrap servers; checks are the engine's checks a
// spec must pass (runner.Validate). A spec that does not parse, or that
// they refuse, is allowed here: the run's execution fails it, saying why.
func (p *Policy) AllowsStored(spec string, checks ...rundoc.Check) error {
	var file rundoc.SpecFile
	if err := json.Unmarshal([]byte(spec), &file); err != nil {
		return nil
	}
	s, err := rundoc.SpecFromParams(file.Workload, file.Params, checks...)
	if err != nil {
		return nil
	}
	return p.Allows(s.Targets())
}

// match reports whether a pattern of p allows t.
func (p *Policy) match(t target) bool {
	if p == nil {
		return false
	}
	for _, tp := range p.patterns {
		if tp.match(t) {
			return true
		}
	}
	return false
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

// CheckName checks a host name without wildcard or port, as a bootstrap
// server's host must be written (letters, digits, - and _, non-empty
// labels of at most 63 characters, at most 253 in all): serve's
// --allow-host names are held to the same rule.
func CheckName(host string) error {
	_, err := splitName(host, false)
	return err
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
