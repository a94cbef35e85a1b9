// Package clusters holds the Kafka clusters a machine names (kbench serve's
// and kbench worker's repeatable --cluster NAME=FILE): each a Kafka client
// properties file (bootstrap.servers, security.protocol, sasl.*, ssl.*)
// that lives only on that machine, so that a run can target a cluster by
// name and its credentials never travel with the run, through the
// database or anywhere else.
//
// A Set is built once from the flag's values (Parse, which reads and
// checks every file, so a bad one stops the command before it starts),
// and each run reads its cluster's file again when it starts (Props), so
// an edited file applies to the next run and a file that became invalid
// fails that run, not the process. No error of this package quotes a
// property's value: the file holds passwords.
package clusters

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// Set is the clusters a process names, by name. A nil *Set names none.
// It is safe for concurrent use: it never changes after Parse.
type Set struct {
	files map[string]string // name → properties file
	names []string          // sorted
	check rundoc.Check
}

// MaxFileBytes bounds a cluster's properties file: a client.properties
// is a few hundred bytes; this refuses a wrong path to a large file.
const MaxFileBytes = 1 << 20

// Parse reads the values of --cluster, each NAME=FILE, and checks every
// file (Props). check is the runner's validation of Kafka properties
// (runner.Validate), applied to a producer's spec holding the file's
// properties; nil checks only what this package knows. Every bad value is
// reported, each error naming the value as given (NAME=FILE) and never
// a property's value. No values give nil, which names no cluster.
func Parse(values []string, check rundoc.Check) (*Set, error) {
	if len(values) == 0 {
		return nil, nil
	}
	s := &Set{files: map[string]string{}, check: check}
	var errs []error
	for _, v := range values {
		name, file, ok := strings.Cut(v, "=")
		name, file = strings.TrimSpace(name), strings.TrimSpace(file)
		switch {
		case !ok || name == "" || file == "":
			errs = append(errs, fmt.Errorf("%q: want NAME=FILE (a name for the cluster, then its Kafka client properties file)", v))
			continue
		case !rundoc.ValidClusterName(name):
			errs = append(errs, fmt.Errorf("%s: the name %q must be letters, digits, '.', '_' or '-' (starting with a letter or digit), at most 64 bytes", v, name))
			continue
		}
		if _, dup := s.files[name]; dup {
			errs = append(errs, fmt.Errorf("%s: the cluster %q is named twice", v, name))
			continue
		}
		s.files[name] = file
		s.names = append(s.names, name)
		if _, err := s.Props(name); err != nil {
			errs = append(errs, fmt.Errorf("%s=%s: %w", name, file, unwrapNamed(err)))
		}
	}
	slices.Sort(s.names)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Names lists the clusters in name order; nil names none.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.names)
}

// Has reports whether name is one of the clusters.
func (s *Set) Has(name string) bool {
	if s == nil {
		return false
	}
	_, ok := s.files[name]
	return ok
}

// File is the properties file of cluster name, "" when there is none.
func (s *Set) File(name string) string {
	if s == nil {
		return ""
	}
	return s.files[name]
}

// UnknownError is a name the set does not hold.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string { return UnknownMessage(e.Name, e.Known) }

// UnknownMessage says that name is not among known, listing them.
func UnknownMessage(name string, known []string) string {
	if len(known) == 0 {
		return fmt.Sprintf("no cluster %q: this kbench names no clusters (start it with --cluster NAME=FILE)", name)
	}
	return fmt.Sprintf("no cluster %q: the clusters named here are %s", name, strings.Join(known, ", "))
}

// namedError is an error about one cluster's file, saying which.
type namedError struct {
	name, file string
	err        error
}

func (e *namedError) Error() string {
	return fmt.Sprintf("cluster %s (%s): %v", e.name, e.file, e.err)
}
func (e *namedError) Unwrap() error { return e.err }

func unwrapNamed(err error) error {
	var ne *namedError
	if errors.As(err, &ne) {
		return ne.err
	}
	return err
}

// Props reads cluster name's properties file again and checks it: only
// connection properties (rundoc.ConnectionProp), bootstrap.servers
// among them, each one the client takes. The result holds secrets:
// split them off (rundoc.SplitSecrets) before writing anything. An
// unknown name is an *UnknownError.
func (s *Set) Props(name string) (map[string]string, error) {
	if !s.Has(name) {
		return nil, &UnknownError{Name: name, Known: s.Names()}
	}
	file := s.files[name]
	props, err := s.read(file)
	if err != nil {
		return nil, &namedError{name: name, file: file, err: err}
	}
	return props, nil
}

func (s *Set) read(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", unwrapPath(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", unwrapPath(err))
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes: not a Kafka client properties file", MaxFileBytes)
	}
	props, err := rundoc.ParseProperties(string(data))
	if err != nil {
		// ParseProperties quotes a line without a key; that line may be
		// a secret, so say only where it is.
		return nil, errors.New("not a properties file: " + lineOnly(err))
	}
	var bad []string
	for k := range props {
		if !rundoc.ConnectionProp(k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("%s: a cluster's file holds only how to reach and log in to it (bootstrap.servers, security.protocol, sasl.*, ssl.*); give other client properties with each run",
			strings.Join(bad, ", "))
	}
	if len(rundoc.SplitServers(props["bootstrap.servers"])) == 0 {
		return nil, errors.New("bootstrap.servers is missing: it names the cluster's brokers (host:port[,host:port])")
	}
	if s.check != nil {
		spec := rundoc.DefaultSpec(rundoc.Producer)
		spec.Props = props
		var errs rundoc.FieldErrors
		s.check(&spec, &errs)
		if len(errs) > 0 {
			msgs := make([]string, 0, len(errs))
			for _, fe := range errs {
				msgs = append(msgs, redactValues(fe.Msg, props))
			}
			return nil, errors.New(strings.Join(msgs, "; "))
		}
	}
	return props, nil
}

// redactValues replaces in msg every secret value of props (and the
// secret options of a JAAS line) with rundoc.Redacted: the client's
// messages name properties, and must not quote a password through a
// path it did not foresee.
func redactValues(msg string, props map[string]string) string {
	_, secrets := rundoc.SplitSecrets(rundoc.Spec{Props: props})
	for _, v := range secrets {
		if v != "" {
			msg = strings.ReplaceAll(msg, v, rundoc.Redacted)
		}
	}
	for k, v := range props {
		if !strings.HasSuffix(strings.ToLower(k), "sasl.jaas.config") {
			continue
		}
		entries, err := rundoc.ParseJAAS(v)
		if err != nil {
			continue
		}
		for _, e := range entries {
			for _, o := range e.Options {
				if o.Value != "" {
					msg = strings.ReplaceAll(msg, o.Value, rundoc.Redacted)
				}
			}
		}
	}
	return msg
}

// lineOnly keeps the "line N" of a properties parse error.
func lineOnly(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ":"); i > 0 && strings.HasPrefix(msg, "line ") {
		return msg[:i] + ": a line without a key"
	}
	return "it does not parse"
}

// unwrapPath drops the path *os.PathError repeats: the message names the
// file already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
