// Package toolcatalog holds the Kafka tools a machine offers to queued runs
// (kbench serve's and kbench worker's repeatable --tool NAME=PATH) and the
// argument template of each kind of tool, filled from a run's spec.
//
// A tool is a program on the machine that executes the run (Kafka's
// kafka-producer-perf-test.sh, say, or a wrapper around it). A run names
// it (rundoc.Spec.Tool) and never gives a path or an argument: its
// command line is built here from the spec's known fields only, with the
// bootstrap server the run's target (which the server checked against
// --allow-target), and its secrets in a properties file the run's child
// writes into its own run directory (WriteConfig), never in argv.
//
// The kind of a tool says which of Kafka's tools it is, and so which
// template and which workload: it is given as NAME=KIND:PATH, or read from
// the basename of PATH (kafka-producer-perf-test, with or without .sh,
// is a producer-perf-test; kafka-e2e-latency an e2e-latency, Kafka's
// EndToEndLatency, whose runs are e2e runs; kafka-share-consumer-perf-test
// a share-consumer-perf-test, KIP-932's share group consumer, whose runs
// are consumer runs).
//
// NAME=KIND@VERSION:PATH declares the tool's Kafka version. The templates
// write the flag names every version takes (the old ones, which Kafka 4.2
// deprecated and keeps until 5.0) unless the tool is declared 4.2 or later:
// then they write KIP-1147's names (--command-property, --command-config,
// --num-records) and EndToEndLatency's named arguments (KIP-1172), so
// the tool prints no deprecation notices.
//
// The set of tools travels from the process that has the flag (serve or
// worker) to a run's child in the child's environment (EnvVar), never
// through the spec or the database; the child checks the program again
// when it starts it. It imports rundoc only.
package toolcatalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/rundoc"
)

// Kind is which of Kafka's tools a program is.
type Kind string

// The kinds kbench fills a template for.
const (
	ProducerPerfTest Kind = "producer-perf-test" // kafka-producer-perf-test(.sh), ProducerPerformance
	ConsumerPerfTest Kind = "consumer-perf-test" // kafka-consumer-perf-test(.sh), ConsumerPerformance
	E2ELatency       Kind = "e2e-latency"        // kafka-e2e-latency(.sh), EndToEndLatency
	// ShareConsumerPerfTest is kafka-share-consumer-perf-test(.sh),
	// ShareConsumerPerformance (Kafka 4.1+): consumers of a share group.
	ShareConsumerPerfTest Kind = "share-consumer-perf-test"
)

// Kinds lists the kinds, in the order help and messages give them.
func Kinds() []Kind {
	return []Kind{ProducerPerfTest, ConsumerPerfTest, ShareConsumerPerfTest, E2ELatency}
}

// Workload is the workload a kind's runs are: what its output is.
func (k Kind) Workload() rundoc.Workload {
	switch k {
	case ProducerPerfTest:
		return rundoc.Producer
	case ConsumerPerfTest, ShareConsumerPerfTest:
		return rundoc.Consumer
	case E2ELatency:
		return rundoc.E2E
	}
	return ""
}

// KindOfWorkload is the kind whose runs are workload w, "" for none: for
// consumer runs the consumer's, not the share group's.
func KindOfWorkload(w rundoc.Workload) Kind {
	for _, k := range Kinds() {
		if k.Workload() == w {
			return k
		}
	}
	return ""
}

// Script is the name of the kind's script in Kafka's bin directory.
func (k Kind) Script() string { return "kafka-" + string(k) + ".sh" }

// Params are the run options (rundoc's flag names) a kind's template
// fills; a run of the kind may give no other. bootstrap-server is the
// run's target, props the Kafka client properties (the template puts
// public ones on the command line where the tool takes them, the rest in
// its properties file).
func (k Kind) Params() []string {
	switch k {
	case ProducerPerfTest:
		return []string{"topic", "num-records", "record-size", "throughput", "producer-props", "print-metrics", "warmup-records"}
	case ConsumerPerfTest:
		return []string{"topic", "messages", "timeout", "fetch-size", "group", "from-latest", "show-detailed-stats",
			"reporting-interval", "consumer-props", "print-metrics"}
	case ShareConsumerPerfTest:
		// A share group has no offsets of its own to start from: no
		// --from-latest.
		return []string{"topic", "messages", "timeout", "fetch-size", "group", "show-detailed-stats",
			"reporting-interval", "consumer-props", "print-metrics"}
	case E2ELatency:
		// acks is a producer property; the others go to its file.
		return []string{"topic", "num-records", "record-size", "producer-props"}
	}
	return nil
}

// Takes reports whether a run of kind k may give param (a rundoc flag
// name, "props" for the workload's properties, "tool" itself, or
// "bootstrap-server", which the target sets).
func (k Kind) Takes(param string) bool {
	switch param {
	case "tool", "bootstrap-server", "props":
		return true
	}
	return slices.Contains(k.Params(), param)
}

// kindOf reads a kind from its name.
func kindOf(s string) (Kind, bool) {
	for _, k := range Kinds() {
		if s == string(k) {
			return k, true
		}
	}
	return "", false
}

// KindFromPath tells the kind from a program's basename: it ends with
// producer-perf-test, consumer-perf-test, share-consumer-perf-test or
// e2e-latency, once .sh, .bat or .cmd is taken off. The longest ending
// wins: kafka-share-consumer-perf-test ends with consumer-perf-test too.
func KindFromPath(path string) (Kind, bool) {
	base := filepath.Base(path)
	for _, ext := range []string{".sh", ".bat", ".cmd"} {
		base = strings.TrimSuffix(base, ext)
	}
	var found Kind
	for _, k := range Kinds() {
		if strings.HasSuffix(base, string(k)) && len(k) > len(found) {
			found = k
		}
	}
	return found, found != ""
}

// Version is a tool's declared Kafka version, "major.minor" ("" when not
// declared: the templates then write the flag names every version takes).
type Version string

// parseVersion reads "4.2" or "4.2.1" (the patch is dropped).
func parseVersion(s string) (Version, bool) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || len(p) > 4 || strings.Trim(p, "0123456789") != "" {
			return "", false
		}
	}
	return Version(parts[0] + "." + parts[1]), true
}

// atLeast reports whether v is declared and at least major.minor.
func (v Version) atLeast(major, minor int) bool {
	if v == "" {
		return false
	}
	a, b, _ := strings.Cut(string(v), ".")
	ma, _ := strconv.Atoi(a)
	mi, _ := strconv.Atoi(b)
	return ma > major || (ma == major && mi >= minor)
}

// NewFlagNames reports whether a tool of version v takes Kafka 4.2's flag
// names (KIP-1147, and EndToEndLatency's named arguments, KIP-1172).
func (v Version) NewFlagNames() bool { return v.atLeast(4, 2) }

// Tool is one program a machine offers.
type Tool struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Version is the Kafka version NAME=KIND@VERSION:PATH declared.
	Version Version `json:"version,omitempty"`
	// Path is absolute, on the machine that offers it.
	Path string `json:"path"`
}

// Set is the tools a process offers, by name. A nil *Set offers none. It
// never changes after Parse, so it is safe for concurrent use.
type Set struct {
	tools map[string]Tool
	names []string // sorted
}

// kindList is the kinds as help lists them.
func kindList() string {
	var s []string
	for _, k := range Kinds() {
		s = append(s, string(k))
	}
	return strings.Join(s, " or ")
}

// Parse reads the values of --tool, each NAME=PATH, NAME=KIND:PATH or
// NAME=KIND@VERSION:PATH,
// and checks that every program exists and is executable. A PATH without
// a slash is looked up in PATH; every path is made absolute. Every bad
// value is reported, each error naming it. No values give nil.
func Parse(values []string) (*Set, error) {
	if len(values) == 0 {
		return nil, nil
	}
	s := &Set{tools: map[string]Tool{}}
	var errs []error
	for _, v := range values {
		t, err := parseOne(v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := s.tools[t.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: the tool %q is named twice", v, t.Name))
			continue
		}
		s.tools[t.Name] = t
		s.names = append(s.names, t.Name)
	}
	slices.Sort(s.names)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func parseOne(v string) (Tool, error) {
	name, rest, ok := strings.Cut(v, "=")
	name, rest = strings.TrimSpace(name), strings.TrimSpace(rest)
	if !ok || name == "" || rest == "" {
		return Tool{}, fmt.Errorf("%q: want NAME=PATH, NAME=KIND:PATH or NAME=KIND@VERSION:PATH (a name for the tool, then the program: KIND is %s)", v, kindList())
	}
	if !rundoc.ValidToolName(name) {
		return Tool{}, fmt.Errorf("%s: the name %q must be letters, digits, '.', '_' or '-' (starting with a letter or digit), at most 64 bytes", v, name)
	}
	t := Tool{Name: name, Path: rest}
	if k, path, ok := strings.Cut(rest, ":"); ok {
		k, ver, versioned := strings.Cut(k, "@")
		if kind, known := kindOf(k); known {
			t.Kind, t.Path = kind, path
			if versioned {
				version, ok := parseVersion(ver)
				if !ok {
					return Tool{}, fmt.Errorf("%s: %q is not a Kafka version: want MAJOR.MINOR, such as 4.2", v, ver)
				}
				t.Version = version
			}
		}
	}
	if t.Kind == "" {
		kind, ok := KindFromPath(t.Path)
		if !ok {
			return Tool{}, fmt.Errorf("%s: which Kafka tool %s is cannot be told from its name: give NAME=KIND:PATH, KIND %s", v, t.Path, kindList())
		}
		t.Kind = kind
	}
	path, err := checkProgram(t.Path)
	if err != nil {
		return Tool{}, fmt.Errorf("%s: %w", v, err)
	}
	t.Path = path
	return t, nil
}

// checkProgram checks that path is an executable regular file (looked up
// in PATH when it holds no slash) and returns it absolute.
func checkProgram(path string) (string, error) {
	if !strings.Contains(path, "/") {
		found, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%s is not a program in PATH", path)
		}
		path = found
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("%s: %w", abs, err)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a file", abs)
	case fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%s is not executable (chmod +x it)", abs)
	}
	return abs, nil
}

// Names lists the tools in name order; nil offers none.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.names)
}

// Get returns the tool called name.
func (s *Set) Get(name string) (Tool, bool) {
	if s == nil {
		return Tool{}, false
	}
	t, ok := s.tools[name]
	return t, ok
}

// Offered is what a worker registers of its tools, which the server's
// form and checks read: "NAME:KIND" each, in name order, comma-separated.
// It holds no path.
func (s *Set) Offered() string {
	var parts []string
	for _, n := range s.Names() {
		parts = append(parts, n+":"+string(s.tools[n].Kind))
	}
	return strings.Join(parts, ",")
}

// ParseOffered reads Offered's text back, as name → kind; entries that do
// not read are left out.
func ParseOffered(text string) map[string]Kind {
	out := map[string]Kind{}
	for _, part := range strings.Split(text, ",") {
		name, k, ok := strings.Cut(part, ":")
		if kind, known := kindOf(k); ok && known && rundoc.ValidToolName(name) {
			out[name] = kind
		}
	}
	return out
}

// Kinds are the tools' kinds by name (nil offers none).
func (s *Set) Kinds() map[string]Kind {
	out := map[string]Kind{}
	for _, n := range s.Names() {
		out[n] = s.tools[n].Kind
	}
	return out
}

// UnknownMessage says that no tool called name is offered, listing those
// that are.
func UnknownMessage(name string, known []string) string {
	if len(known) == 0 {
		return fmt.Sprintf("no tool %q: none is offered here (start kbench serve or kbench worker with --tool NAME=PATH)", name)
	}
	return fmt.Sprintf("no tool %q: the tools offered here are %s", name, strings.Join(known, ", "))
}

// EnvVar is the environment variable through which serve or a worker
// tells a run's child its tools (their paths never travel with a run).
const EnvVar = "KBENCH_TOOLS"

// Env is the value of EnvVar for s ("" for none).
func (s *Set) Env() string {
	if s == nil || len(s.names) == 0 {
		return ""
	}
	list := make([]Tool, 0, len(s.names))
	for _, n := range s.names {
		list = append(list, s.tools[n])
	}
	b, _ := json.Marshal(list)
	return string(b)
}

// FromEnv reads the tools a parent passed in EnvVar (through getenv),
// checking each program again.
func FromEnv(getenv func(string) string) (*Set, error) {
	raw := getenv(EnvVar)
	if raw == "" {
		return nil, nil
	}
	var list []Tool
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil, fmt.Errorf("%s: not a list of tools", EnvVar)
	}
	values := make([]string, 0, len(list))
	for _, t := range list {
		kind := string(t.Kind)
		if t.Version != "" {
			kind += "@" + string(t.Version)
		}
		values = append(values, t.Name+"="+kind+":"+t.Path)
	}
	return Parse(values)
}

// CheckSpec reports the errors of a run of tool kind k whose spec gave
// the params named in given: those its template does not fill are
// refused, each under its name, so nothing a request asked for is
// silently left out of the command.
func CheckSpec(k Kind, toolName string, given []string, errs *rundoc.FieldErrors) {
	slices.Sort(given)
	for _, p := range given {
		if !k.Takes(p) {
			errs.Add(p, "is not an option of %s (tool %s), which takes %s", k.Script(), toolName, strings.Join(k.Params(), ", "))
		}
	}
}

// Args fills kind k's template from spec for a tool of Kafka version v:
// the tool's arguments, without the program. configFile is the properties
// file WriteConfig wrote ("" when it wrote none). Only known fields of the
// spec go in; its bootstrap servers are its target (the BootstrapServer
// field, else the bootstrap.servers property).
//
// The flag names are those every version takes unless v is 4.2 or later
// (Version.NewFlagNames): --producer-props, --producer.config,
// --messages and --consumer.config, which 4.2 deprecated, or then
// --command-property, --command-config and --num-records. EndToEndLatency
// takes positional arguments, broker_list topic num_messages producer_acks
// message_size_bytes [properties_file], in every version from 0.9 to 4.x
// (4.2 prints a deprecation notice for them, which the import keeps as a
// note), or from 4.2 the named --bootstrap-server, --topic,
// --num-records, --producer-acks, --record-size and --command-config.
//
// Every value that goes on the command line is checked first, whatever
// validated the spec before: a topic, a server list or a property that
// the tool's parser could read as an option or as two arguments is an
// error, so no spec can add an option to the template's.
func Args(k Kind, v Version, spec rundoc.Spec, configFile string) ([]string, error) {
	servers := spec.BootstrapServer
	if servers == "" {
		servers = spec.Props["bootstrap.servers"]
	}
	if strings.TrimSpace(servers) == "" {
		return nil, errors.New("toolcatalog: the run has no bootstrap server: a Kafka tool needs a cluster to target")
	}
	if err := checkArgs(spec, servers); err != nil {
		return nil, err
	}
	num := func(n int64) string { return strconv.FormatInt(n, 10) }
	// The names of the flags KIP-1147 renamed.
	propsFlag, producerFile, countFlag, consumerFile := "--producer-props", "--producer.config", "--messages", "--consumer.config"
	if v.NewFlagNames() {
		propsFlag, producerFile, countFlag, consumerFile = "--command-property", "--command-config", "--num-records", "--command-config"
	}
	var args []string
	switch k {
	case ProducerPerfTest:
		if spec.NumRecords < 1 {
			return nil, errors.New("toolcatalog: a producer perf test needs --num-records (it has no --duration)")
		}
		args = []string{"--topic", spec.Topic, "--num-records", num(spec.NumRecords), "--record-size", strconv.Itoa(spec.RecordSize),
			"--throughput", strconv.FormatFloat(spec.Throughput, 'f', -1, 64)}
		props := []string{"bootstrap.servers=" + servers}
		public, _ := toolProps(spec.Props)
		for _, key := range sortedKeys(public) {
			props = append(props, key+"="+public[key])
		}
		args = append(args, propsFlag)
		args = append(args, props...)
		if configFile != "" {
			args = append(args, producerFile, configFile)
		}
		if spec.WarmupRecords > 0 {
			args = append(args, "--warmup-records", num(spec.WarmupRecords))
		}
	case ConsumerPerfTest, ShareConsumerPerfTest:
		if spec.NumRecords < 1 {
			return nil, fmt.Errorf("toolcatalog: a %s needs --messages (it has no --duration)", strings.ReplaceAll(string(k), "-", " "))
		}
		args = []string{"--bootstrap-server", servers, "--topic", spec.Topic, countFlag, num(spec.NumRecords),
			"--timeout", num(spec.Timeout), "--fetch-size", strconv.Itoa(spec.FetchSize), "--reporting-interval", num(spec.ReportingInterval)}
		if spec.Group != "" {
			args = append(args, "--group", spec.Group)
		}
		if spec.FromLatest && k == ConsumerPerfTest {
			args = append(args, "--from-latest")
		}
		if spec.ShowDetailedStats {
			args = append(args, "--show-detailed-stats")
		}
		if configFile != "" {
			args = append(args, consumerFile, configFile)
		}
	case E2ELatency:
		if spec.NumRecords < 1 {
			return nil, errors.New("toolcatalog: an end-to-end latency test needs --num-records (it has no --duration)")
		}
		acks, err := E2EAcks(spec.Props)
		if err != nil {
			return nil, err
		}
		if v.NewFlagNames() {
			args = []string{"--bootstrap-server", servers, "--topic", spec.Topic, "--num-records", num(spec.NumRecords),
				"--producer-acks", acks, "--record-size", strconv.Itoa(spec.RecordSize)}
			if configFile != "" {
				args = append(args, "--command-config", configFile)
			}
			return args, nil
		}
		args = []string{servers, spec.Topic, num(spec.NumRecords), acks, strconv.Itoa(spec.RecordSize)}
		if configFile != "" {
			args = append(args, configFile)
		}
		return args, nil
	default:
		return nil, fmt.Errorf("toolcatalog: no template for kind %q", k)
	}
	if spec.PrintMetrics {
		args = append(args, "--print-metrics")
	}
	return args, nil
}

// checkArgs refuses a spec whose fields would not stay one argument of
// the template each: a topic that is not Kafka's, a server list holding
// anything but host:port text, a group that reads as an option, a
// property name or value that is not a
// Java property's (rundoc.CheckPropKey, CheckPropValue), or one that
// names a configuration file.
func checkArgs(spec rundoc.Spec, servers string) error {
	if err := rundoc.CheckTopic(spec.Topic); err != nil {
		return fmt.Errorf("toolcatalog: topic: %w", err)
	}
	if strings.HasPrefix(servers, "-") || strings.ContainsFunc(servers, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '=' }) {
		return errors.New("toolcatalog: the bootstrap servers are not a host:port list")
	}
	if err := rundoc.CheckGroup(spec.Group); err != nil {
		return fmt.Errorf("toolcatalog: group: %w", err)
	}
	if err := rundoc.CheckProps(spec.Props); err != nil {
		return fmt.Errorf("toolcatalog: %w", err)
	}
	for _, key := range sortedKeys(spec.Props) {
		if rundoc.ConfigFileProp(key) {
			return fmt.Errorf("toolcatalog: property %s names a configuration file, which a run never gives its tool", key)
		}
	}
	return nil
}

// ConfigProps are the properties kind k's tool reads from its properties
// file: the secret ones (rundoc.SplitSecrets) for the producer, which
// takes the others on its command line; every one for the consumer and
// EndToEndLatency, which have no such option (EndToEndLatency gives its
// file to its producer, consumer and admin client alike; acks is its
// argument, so it is left out). kbench's sasl.username and sasl.password
// become the sasl.jaas.config Kafka's Java client reads. bootstrap.servers
// is left out: the command line has the target.
func ConfigProps(k Kind, props map[string]string) map[string]string {
	public, secret := toolProps(props)
	if k == ProducerPerfTest {
		return secret
	}
	for key, v := range public {
		secret[key] = v
	}
	if k == E2ELatency {
		delete(secret, "acks")
	}
	return secret
}

// E2EAcks is the producer_acks argument of EndToEndLatency for a run's
// properties: their acks, all when they give none (kbench's e2e default
// and Kafka's producer's). The tool takes 1 or all only ("Latency testing
// requires synchronous acknowledgement"), so any other value is an error.
func E2EAcks(props map[string]string) (string, error) {
	acks, ok := props["acks"]
	if !ok {
		return "all", nil
	}
	if acks != "1" && acks != "all" {
		return "", fmt.Errorf("toolcatalog: acks=%s: Kafka's EndToEndLatency takes acks 1 or all", acks)
	}
	return acks, nil
}

// toolProps splits props into what may appear on a command line and
// what may not, as the Java client takes them: bootstrap.servers left
// out, sasl.username and sasl.password turned into a sasl.jaas.config.
func toolProps(props map[string]string) (public, secret map[string]string) {
	all := map[string]string{}
	for k, v := range props {
		if k != "bootstrap.servers" {
			all[k] = v
		}
	}
	user, hasUser := all["sasl.username"]
	pass, hasPass := all["sasl.password"]
	if hasUser || hasPass {
		delete(all, "sasl.username")
		delete(all, "sasl.password")
		if _, ok := all["sasl.jaas.config"]; !ok {
			module := "org.apache.kafka.common.security.plain.PlainLoginModule"
			if strings.HasPrefix(strings.ToUpper(all["sasl.mechanism"]), "SCRAM-") {
				module = "org.apache.kafka.common.security.scram.ScramLoginModule"
			}
			all["sasl.jaas.config"] = fmt.Sprintf("%s required username=%s password=%s;", module, jaasQuote(user), jaasQuote(pass))
		}
	}
	pub, sec := rundoc.SplitSecrets(rundoc.Spec{Props: all})
	public = pub.Props
	if public == nil {
		public = map[string]string{}
	}
	if sec == nil {
		sec = map[string]string{}
	}
	for key, v := range public {
		if strings.ContainsAny(v, "\r\n") {
			// Inline PEM spans lines: the file, which escapes them,
			// carries it, so every argument stays one line.
			sec[key] = v
			delete(public, key)
		}
	}
	return public, sec
}

// jaasQuote quotes a JAAS option value.
func jaasQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ConfigFileName is the name of the properties file a run's child writes
// into its run directory for the tool (mode 0600, removed when the tool
// has ended).
const ConfigFileName = "tool-client.properties"

// WriteConfig writes props into dir/ConfigFileName with mode 0600, as
// Java properties, and returns its path; no props write nothing and give
// "". The caller removes the file when the tool has ended.
func WriteConfig(dir string, props map[string]string) (string, error) {
	if len(props) == 0 {
		return "", nil
	}
	for k, v := range props {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			// Never quote it: it may be a password.
			return "", errors.New("toolcatalog: a property's name or value is not UTF-8 text")
		}
	}
	var b strings.Builder
	b.WriteString("# written by kbench for one run of a Kafka tool; removed when it ends\n")
	for _, k := range sortedKeys(props) {
		b.WriteString(escapeProp(k, true) + "=" + escapeProp(props[k], false) + "\n")
	}
	path := filepath.Join(dir, ConfigFileName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("toolcatalog: write the tool's properties file: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("toolcatalog: write the tool's properties file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("toolcatalog: write the tool's properties file: %w", err)
	}
	return path, nil
}

// escapeProp escapes text for a Java properties file as Kafka's tools
// read it (Properties.load of a stream: ISO 8859-1): backslashes, line
// breaks, a leading space, in a key the separators, and every character
// beyond ASCII as \uXXXX (UTF-16, so a surrogate pair above U+FFFF).
func escapeProp(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case key && (r == '=' || r == ':' || r == '#' || r == '!'):
			b.WriteString(`\` + string(r))
		case r < 0x20 || r >= 0x7f:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
