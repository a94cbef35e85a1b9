package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// NewRunFormView is the new-run form. (The name NewRunView belongs to the
// run page's constructor.)
type NewRunFormView struct {
	Page
	Action string // where the form posts: CreateRunPath
	// Errors lists the invalid fields in form order, for the summary.
	Errors   []FormError
	Sections []FormSection
	// Workload is the chosen workload, for hiding fields that do not apply.
	Workload string
	// Configs are the configurations added to compare with the form's
	// own (configuration A); ConfigTemplate is a blank one for the
	// script to copy; CanAddConfig says whether one more fits (abtest.go).
	Configs        []ConfigFieldset
	ConfigTemplate ConfigFieldset
	CanAddConfig   bool
	// Fleet is the division of a fleet run the form previewed ("Preview
	// the division"), nil when none was asked for.
	Fleet *FleetPreview
}

// FormSection is a fieldset of the form.
type FormSection struct {
	ID     string
	Legend string
	Help   string
	Fields []FormField
}

// A form's errors come as a map from each field to its messages, one a
// line: a field that breaks several rules has several, and every one is
// shown (ErrorLines splits them).

// ErrorLines are the messages of one field of a form's errors: one a
// line, "is not valid" for an empty one.
func ErrorLines(msg string) []string {
	var out []string
	for _, m := range strings.Split(msg, "\n") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		out = []string{"is not valid"}
	}
	return out
}

// FormError is one line of the error summary.
type FormError struct {
	Field   string
	Label   string
	Message string
	Anchor  string // "#f-num-records", "" when the field is not on the form
}

// FormField is one input. Kind picks the control: text, number, password,
// textarea, select, radio, checkbox or checkboxes.
type FormField struct {
	Name        string
	ID          string
	Label       string
	Flag        bool // a `kbench run` flag: the label is its flag name
	Kind        string
	Value       string
	Placeholder string
	Help        string
	HelpID      string
	// Error is set when the field has errors, Errors holds them all:
	// each rule the value breaks.
	Error       string
	Errors      []string
	ErrorID     string
	DescribedBy string // ids for aria-describedby
	Options     []Option
	// Checked is a checkbox's state.
	Checked bool
	// NoneValue is sent in a hidden input of the same name alongside a
	// checkbox group, so that unticking every box still sends the field.
	NoneValue string
	// Workloads is the data-workload attribute: the workloads the field
	// applies to, space-separated; AppliesTo says it in words.
	Workloads string
	AppliesTo string
	Min       string
	Max       string
	Step      string
	MaxLength int
	// Autocomplete is the autocomplete attribute, "" for the default.
	Autocomplete string
	// Suggestions, for a text input, are values offered in a datalist
	// (ListID) while any other stays allowed.
	Suggestions []string
	ListID      string
	// EnabledWhen is the data-enabled-when attribute: the field applies
	// only while every "name=value|value" condition (space-separated)
	// holds, and new_run.js disables it otherwise, so that it is not
	// submitted. Without the script the server ignores it instead.
	EnabledWhen string
}

// Fixed form fields besides the runner's flags.
const (
	FieldWorkload         = "workload"
	FieldLabel            = "label"
	FieldMeta             = "meta"
	FieldRepetitions      = "repetitions"
	FieldWarmupRuns       = "warmup_runs"
	FieldTarget           = "target"
	FieldBootstrapServer  = "bootstrap-server"
	FieldSecurityProtocol = "security-protocol"
	FieldSASLMechanism    = "sasl-mechanism"
	FieldSASLUsername     = "sasl-username"
	FieldSASLPassword     = "sasl-password"
	// FieldCluster chooses among the server's named clusters; its name
	// is the API's, so a bad choice is shown beside it.
	FieldCluster = "target.cluster"
)

// Target choices.
const (
	TargetEmbedded  = "embedded"
	TargetBootstrap = "bootstrap"
	TargetCluster   = "cluster" // one of the server's named clusters (serve --cluster)
)

// Choices of the target's select fields: what kbench's client supports.
var (
	SecurityProtocols = rundoc.SecurityProtocols()
	SASLMechanisms    = rundoc.SASLMechanisms()
)

// When the target's fields apply (see FormField.EnabledWhen).
var (
	clusterOnly = FieldTarget + "=" + TargetBootstrap
	saslOnly    = clusterOnly + " " + FieldSecurityProtocol + "=" + strings.Join(saslProtocols(), "|")
)

// saslProtocols are the security protocols that authenticate with SASL.
func saslProtocols() []string {
	var out []string
	for _, p := range SecurityProtocols {
		if strings.HasPrefix(p, "SASL_") {
			out = append(out, p)
		}
	}
	return out
}

// ProfileFlag is the runner flag whose values are profile kinds.
const ProfileFlag = "profile"

// profileNone is what the profile checkbox group sends when nothing is ticked.
const profileNone = "none"

// excludedFlags are runner flags the web form does not offer: the
// bootstrap server has its own field, and server-side file paths are not
// accepted from a browser.
var excludedFlags = map[string]bool{
	"bootstrap-server":  true,
	"payload-file":      true,
	"payload-delimiter": true,
	"producer.config":   true,
	"consumer.config":   true,
	// Notes are what a tool that writes the spec says of it (kbench run
	// omb's translation); a person on the form has the label and meta.
	"notes": true,
}

// FormDuration is the form's default run length in seconds for the
// producer and the consumer: a run from the form lasts this long unless it
// gives a count or a duration. The CLI keeps Kafka's count (500,000): a
// count-based window of a fast client lasts a fraction of a second, too
// short for its figures to mean much.
const FormDuration = "10"

// timedWorkloads are the workloads the form runs for FormDuration seconds
// by default, with the flag of their count.
var timedWorkloads = map[string]string{string(rundoc.Producer): "num-records", string(rundoc.Consumer): "messages"}

// runnerFlags lists the runner's flags; tests swap in a fixed list so that
// golden files do not change with every help text.
var runnerFlags = rundoc.Flags

// FormFlags are the runner flags the form offers, in --help order.
func FormFlags() []rundoc.Flag {
	var out []rundoc.Flag
	for _, f := range runnerFlags() {
		if !excludedFlags[f.Name] {
			out = append(out, f)
		}
	}
	return out
}

// NewRunForm builds the new-run form. values are what the user submitted
// (nil or empty for a fresh form with defaults); errs maps field names
// (flag names, label, repetitions, warmup_runs, target, bootstrap-server,
// sasl-…) to messages. Every value is shown as submitted except the SASL
// password, which is never rendered.
func NewRunForm(values url.Values, errs map[string]string) NewRunFormView {
	return NewRunFormClusters(values, errs, nil)
}

// ClusterChoice is a named cluster the new-run form offers: its name, and
// the queues whose workers name it (the server's own, queue local, or
// the live workers of another queue), nil on a server whose store no
// other worker shares, where the server's own worker is the only one.
type ClusterChoice struct {
	Name   string
	Queues []string
}

// label is the choice as the form's select shows it: the name, and which
// queues name it when there are queues to choose.
func (c ClusterChoice) label() string {
	switch len(c.Queues) {
	case 0:
		return c.Name
	case 1:
		return c.Name + " (queue " + c.Queues[0] + ")"
	}
	return c.Name + " (queues " + strings.Join(c.Queues, ", ") + ")"
}

// NewRunFormClusters is NewRunForm on a server where named clusters can
// be targeted: the target may then be one of them, chosen by name (the
// properties, and any password, stay in the files of the machine that
// names it). A run goes to its queue (the queue field), whose workers
// must name the cluster; each choice says which queues do.
func NewRunFormClusters(values url.Values, errs map[string]string, clusters []ClusterChoice) NewRunFormView {
	fresh := len(values) == 0
	get := func(name, def string) string {
		if fresh {
			return def
		}
		return values.Get(name)
	}
	choice := func(name string, choices []string, def string) string {
		v := strings.TrimSpace(values.Get(name))
		if contains(choices, v) {
			return v
		}
		return def
	}

	workload := choice(FieldWorkload, names(rundoc.Workloads()), string(rundoc.Producer))
	v := NewRunFormView{
		Page:     Page{Title: "New run"},
		Action:   CreateRunPath,
		Workload: workload,
	}

	run := FormSection{ID: "run", Legend: "Run", Fields: []FormField{
		{Name: FieldWorkload, Label: "Workload", Kind: "radio", Value: workload,
			Help:    "producer: kafka-producer-perf-test; consumer: kafka-consumer-perf-test; writepath: Produce requests written with a chosen strategy (see the write-path lab)",
			Options: choiceOptions(names(rundoc.Workloads()), nil, workload)},
		{Name: FieldLabel, Label: "Label", Kind: "text", Value: get(FieldLabel, ""), MaxLength: 200,
			Placeholder: "e.g. trunk", Help: "names what is measured, e.g. trunk or my-branch: runs are compared by label"},
		{Name: FieldMeta, Label: "Metadata", Kind: "textarea", Value: get(FieldMeta, ""), Placeholder: "commit=abc123\nbranch=trunk",
			Help: "key=value tags, one a line: commit, branch and version are known (the branch chooses the run's history), any other key is yours"},
		{Name: FieldRepetitions, Label: "Repetitions", Kind: "number", Value: get(FieldRepetitions, "1"),
			Min: "1", Max: "50", Step: "1", Placeholder: "1",
			Help: "measured runs (of each configuration, when you compare several below); at least 6 give a 95% confidence interval"},
		{Name: FieldWarmupRuns, Label: "Warm-up runs", Kind: "number", Value: get(FieldWarmupRuns, "0"),
			Min: "0", Max: "10", Step: "1", Placeholder: "0",
			Help: "whole runs before the measured ones, discarded from every figure"},
	}}

	targets := []string{TargetEmbedded, TargetBootstrap}
	clusterTarget := "a cluster this server names (its properties stay on the server)"
	if len(clusters) > 0 {
		targets = append(targets, TargetCluster)
		if len(clusters[0].Queues) > 0 {
			clusterTarget = "a named cluster (its properties stay on the machine that names it: this server or a worker)"
		}
	}
	target := choice(FieldTarget, targets, TargetEmbedded)
	security := choice(FieldSecurityProtocol, SecurityProtocols, SecurityProtocols[0])
	mechanism := choice(FieldSASLMechanism, SASLMechanisms, SASLMechanisms[0])
	conn := FormSection{ID: "target", Legend: "Target", Help: rundoc.EmbeddedBrokerNote, Fields: []FormField{
		{Name: FieldTarget, Label: "Broker", Kind: "radio", Value: target,
			Options: choiceOptions(targets, map[string]string{
				TargetEmbedded:  "embedded broker (kfake, in its own process)",
				TargetBootstrap: "a Kafka cluster (bootstrap servers below)",
				TargetCluster:   clusterTarget,
			}, target)},
		{Name: FieldBootstrapServer, Label: "Bootstrap servers", Kind: "text", Value: get(FieldBootstrapServer, ""),
			Placeholder: "host:9092,host2:9092", Help: "host:port[,host:port] of the cluster, when the broker is a Kafka cluster",
			Autocomplete: "off", EnabledWhen: clusterOnly},
		{Name: FieldSecurityProtocol, Label: "Security protocol", Kind: "select", Value: security,
			Options: choiceOptions(SecurityProtocols, nil, security), Help: "Kafka's security.protocol", EnabledWhen: clusterOnly},
		{Name: FieldSASLMechanism, Label: "SASL mechanism", Kind: "select", Value: mechanism,
			Options: choiceOptions(SASLMechanisms, nil, mechanism), Help: "with " + orList(saslProtocols()), EnabledWhen: saslOnly},
		{Name: FieldSASLUsername, Label: "SASL username", Kind: "text", Value: get(FieldSASLUsername, ""),
			Autocomplete: "off", Help: "with " + orList(saslProtocols()), EnabledWhen: saslOnly},
		// The password is never rendered back: Value stays empty.
		{Name: FieldSASLPassword, Label: "SASL password", Kind: "password", Autocomplete: "new-password",
			Help: "used for this run only, never stored or shown; enter it again after a correction", EnabledWhen: saslOnly},
	}}
	if len(clusters) > 0 {
		conn.Fields = append(conn.Fields, clusterField(values, clusters))
	}

	opts := FormSection{ID: "options", Legend: "Workload options",
		Help: "Kafka's perf-test flags; empty fields take the default shown"}
	for _, f := range FormFlags() {
		opts.Fields = append(opts.Fields, flagField(f, values, fresh))
	}
	v.Sections = []FormSection{run, conn, ombSection(values), opts}
	errs = foldOMBErrors(errs)

	// Wire up ids, errors and the summary, in form order.
	known := map[string]bool{}
	for si := range v.Sections {
		for fi := range v.Sections[si].Fields {
			f := &v.Sections[si].Fields[fi]
			known[f.Name] = true
			v.wire(f, errs)
		}
	}
	v.Configs, v.ConfigTemplate, v.CanAddConfig = formConfigSets(values, errs)
	for ci := range v.Configs {
		for _, f := range []*FormField{&v.Configs[ci].Label, &v.Configs[ci].Params} {
			known[f.Name] = true
			n := len(v.Errors)
			v.wire(f, errs)
			for i := n; i < len(v.Errors); i++ {
				// The summary says whose field it is.
				v.Errors[i].Label = "Configuration " + v.Configs[ci].Letter + ": " + strings.ToLower(f.Label)
			}
		}
	}
	v.wire(&v.ConfigTemplate.Label, nil)
	v.wire(&v.ConfigTemplate.Params, nil)
	var other []string
	for name := range errs {
		if !known[name] {
			other = append(other, name)
		}
	}
	sort.Strings(other)
	for _, name := range other {
		for _, msg := range ErrorLines(errs[name]) {
			v.Errors = append(v.Errors, FormError{Field: name, Label: name, Message: msg})
		}
	}
	return v
}

// The new-run form's fields of an OpenMessaging Benchmark workload: the
// files' contents, as the API's params of the same names.
const (
	FieldOMBWorkload = "omb-workload"
	FieldOMBDriver   = "omb-driver"
)

// ombSection is the form's OpenMessaging Benchmark section: a workload
// file and a Kafka driver file, pasted, which the e2e workload runs with
// kbench's clients as kbench run omb does.
func ombSection(values url.Values) FormSection {
	field := func(name, label, placeholder, help string) FormField {
		return FormField{Name: name, Label: label, Kind: "textarea", Value: redactPropertyLines(values.Get(name)), Placeholder: placeholder, Help: help,
			Workloads: string(rundoc.E2E), AppliesTo: "e2e only"}
	}
	return FormSection{ID: "omb", Legend: "OpenMessaging Benchmark",
		Help: "e2e: paste an OMB Kafka workload and driver file to run them with kbench's clients, as kbench run omb does. The workload's fields define the run: " +
			"leave the workload options below empty, but for duration and warmup (seconds, in place of its whole minutes), payload (the payloadFile's contents, base64), topic and profile. " +
			"The driver's bootstrap.servers is the target unless you choose a cluster above (without one in its commonConfig, the embedded broker); the run's notes list its properties kbench's client does not apply",
		Fields: []FormField{
			field(FieldOMBWorkload, "OMB workload (YAML)", "topics: 1\npartitionsPerTopic: 16\nmessageSize: 1024\n…", "an OMB workload file (workloads/*.yaml)"),
			field(FieldOMBDriver, "OMB driver (YAML)", "driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver\nreplicationFactor: 3\n…",
				"an OMB Kafka driver file (driver-kafka/*.yaml); its passwords are never shown again: enter them again after a correction"),
		}}
}

// redactPropertyLines is text with the value of every line that is a
// secret Kafka property (a password, a JAAS line's password) redacted,
// as the form shows a submitted OMB driver again: like the SASL
// password field, it never renders a secret back.
func redactPropertyLines(text string) string {
	if text == "" {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		props, err := rundoc.ParseProperties(trimmed)
		if err != nil || len(props) != 1 {
			continue
		}
		for k, v := range props {
			if r := rundoc.RedactProps(props)[k]; r != v {
				indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
				lines[i] = indent + k + "=" + r
			}
		}
	}
	return strings.Join(lines, "\n")
}

// foldOMBErrors shows the errors of the OMB files' fields
// (omb-workload.topics, …) beside the file's field, one a line, each
// naming its field.
func foldOMBErrors(errs map[string]string) map[string]string {
	var folded map[string]string
	for k, msg := range errs {
		for _, file := range []string{FieldOMBWorkload, FieldOMBDriver} {
			field, ok := strings.CutPrefix(k, file+".")
			if !ok {
				continue
			}
			if folded == nil {
				folded = make(map[string]string, len(errs))
				for k2, m2 := range errs {
					folded[k2] = m2
				}
			}
			delete(folded, k)
			var lines []string
			for _, m := range ErrorLines(msg) {
				lines = append(lines, field+": "+m)
			}
			if folded[file] != "" {
				lines = append([]string{folded[file]}, lines...)
			}
			folded[file] = strings.Join(lines, "\n")
		}
	}
	if folded == nil {
		return errs
	}
	return folded
}

// wire gives f its id, its error from errs (adding it to the summary) and
// the ids that describe it.
func (v *NewRunFormView) wire(f *FormField, errs map[string]string) {
	// A browser would blank a number input holding "12x": show what was
	// sent, as text, so the user can see and fix it.
	if f.Kind == "number" && f.Value != "" && !isNumber(f.Value) {
		f.Kind, f.Min, f.Max, f.Step = "text", "", "", ""
	}
	f.ID = fieldID(f.Name)
	var describedBy []string
	if f.Help != "" || f.AppliesTo != "" {
		f.HelpID = f.ID + "-help"
		describedBy = append(describedBy, f.HelpID)
	}
	if msg, ok := errs[f.Name]; ok {
		f.Errors = ErrorLines(msg)
		f.Error = strings.Join(f.Errors, " ")
		f.ErrorID = f.ID + "-error"
		describedBy = append([]string{f.ErrorID}, describedBy...)
		for _, m := range f.Errors {
			v.Errors = append(v.Errors, FormError{Field: f.Name, Label: f.Label, Message: m, Anchor: "#" + f.ID})
		}
	}
	f.DescribedBy = strings.Join(describedBy, " ")
}

// clusterField is the select of named clusters, the submitted one chosen
// (kept, and marked, when it is not among them: a worker that named it
// may have stopped since the form was sent).
func clusterField(values url.Values, clusters []ClusterChoice) FormField {
	names := make([]string, len(clusters))
	labels := map[string]string{}
	queues := false
	for i, c := range clusters {
		names[i], labels[c.Name] = c.Name, c.label()
		queues = queues || len(c.Queues) > 0
	}
	name := strings.TrimSpace(values.Get(FieldCluster))
	switch {
	case name == "":
		name = names[0]
	case !contains(names, name):
		names = append(names, name)
		labels[name] = name + " (not one of the choices)"
	}
	options := choiceOptions(names, labels, name)
	for i, c := range clusters {
		options[i].Queues = strings.Join(c.Queues, " ")
	}
	f := FormField{Name: FieldCluster, Label: "Named cluster", Kind: "select", Value: name,
		Options: options, EnabledWhen: FieldTarget + "=" + TargetCluster,
		Help: "a cluster kbench serve names (--cluster NAME=FILE): where it is and how to log in come from its file on the server"}
	if queues {
		f.Help = "a cluster named with --cluster NAME=FILE by this server (queue local) or by the live workers of a queue (kbench worker): where it is and how to log in come from its file on that machine. The run's queue must be one whose workers name it"
	}
	return f
}

// flagField is the input for one runner flag.
func flagField(f rundoc.Flag, values url.Values, fresh bool) FormField {
	ff := FormField{
		Name:        f.Name,
		Label:       f.Name,
		Flag:        true,
		Help:        f.Help,
		Placeholder: f.Default,
		Value:       values.Get(f.Name),
		Workloads:   strings.Join(names(f.Workloads), " "),
	}
	if len(f.Workloads) == 1 {
		ff.AppliesTo = string(f.Workloads[0]) + " only"
	}
	// A default naming the first workload ("kbench-producer") differs by
	// workload: say so rather than show the producer's.
	if len(f.Workloads) > 1 && f.Default == "kbench-"+string(f.Workloads[0]) {
		ff.Placeholder = "kbench-<workload>"
	}
	switch f.Name {
	case "duration":
		ff.Placeholder = FormDuration
		ff.Help += "; the form's default: producer and consumer run " + FormDuration + " s when neither a duration nor a count is given (the write path sends its --requests)"
	case "num-records", "messages":
		ff.Placeholder = ""
		ff.Help += "; empty: a " + FormDuration + " s run (see duration)"
	}
	switch {
	case f.Name == ProfileFlag:
		ff.Kind, ff.Value, ff.Placeholder, ff.NoneValue = "checkboxes", "", "", profileNone
		chosen := splitList(f.Default)
		if _, sent := values[f.Name]; sent && !fresh {
			chosen = nil
			for _, v := range values[f.Name] {
				chosen = append(chosen, splitList(v)...)
			}
		}
		for _, k := range names(rundoc.ProfileKinds()) {
			ff.Options = append(ff.Options, Option{Value: k, Label: k, Selected: contains(chosen, k)})
		}
	case len(f.Choices) > 0:
		// A closed set: the runner's choices, behind an empty "default"
		// choice that keeps each workload's default (they may differ).
		ff.Kind, ff.Placeholder = "select", ""
		cur := strings.TrimSpace(ff.Value)
		values := []string{""}
		labels := map[string]string{"": defaultLabel(f)}
		for _, c := range f.Choices {
			if contains(c.Aliases, cur) {
				cur = c.Value // the same choice, by its name
			}
			values = append(values, c.Value)
			l := c.Value
			if len(c.Workloads) > 0 && len(c.Workloads) < len(f.Workloads) {
				l = strings.Join(names(c.Workloads), ", ") + ": " + l
			}
			if c.Help != "" {
				l += " — " + c.Help
			}
			labels[c.Value] = l
		}
		if !contains(values, cur) {
			// Only a hand-made request sends another value: show it,
			// beside the server's error, rather than lose it.
			values = append(values, cur)
			labels[cur] = cur + " (not one of the choices)"
		}
		ff.Value = cur
		ff.Options = choiceOptions(values, labels, cur)
	case f.Kind == "int":
		ff.Kind, ff.Step = "number", "1"
	case f.Kind == "float":
		ff.Kind, ff.Step = "number", "any"
	case f.Kind == "bool":
		ff.Kind, ff.Placeholder = "checkbox", ""
		ff.Checked = isTrue(ff.Value) || (fresh && isTrue(f.Default))
		ff.Value = "true"
	case f.Kind == "props":
		ff.Kind = "textarea"
		if ff.Placeholder == "" {
			ff.Placeholder = "key=value, one per line"
		}
	case f.Kind == "list":
		ff.Kind = "text"
	default:
		ff.Kind = "text"
	}
	return ff
}

// defaultLabel names a select's default choice: "default (gather)", or by
// workload when the defaults differ: "default (producer: raw, consumer:
// group)".
func defaultLabel(f rundoc.Flag) string {
	same := true
	for _, w := range f.Workloads {
		same = same && f.Defaults[w] == f.Default
	}
	if same {
		return "default (" + f.Default + ")"
	}
	parts := make([]string, len(f.Workloads))
	for i, w := range f.Workloads {
		parts[i] = string(w) + ": " + f.Defaults[w]
	}
	return "default (" + strings.Join(parts, ", ") + ")"
}

// orList joins "a", "b", "c" as "a, b or c".
func orList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// FormParams turns a submitted new-run form into the workload and the
// params rundoc.SpecFromParams takes: only the flags the form offers that
// apply to the workload, only non-empty ones; props one key=value a line;
// an unticked profile group becomes "none". The fixed fields (label,
// repetitions, target, SASL, …) are the caller's to read.
func FormParams(values url.Values) (workload string, params map[string]json.RawMessage) {
	workload = strings.TrimSpace(values.Get(FieldWorkload))
	params = map[string]json.RawMessage{}
	str := func(s string) json.RawMessage {
		data, _ := json.Marshal(s)
		return data
	}
	for _, f := range FormFlags() {
		if !contains(names(f.Workloads), workload) {
			continue
		}
		vals, sent := values[f.Name]
		if !sent {
			continue
		}
		switch {
		case f.Kind == "bool":
			for _, v := range vals {
				if isTrue(v) {
					params[f.Name] = json.RawMessage("true")
				}
			}
		case f.Kind == "list":
			var kinds []string
			for _, v := range vals {
				for _, k := range splitList(v) {
					if k != profileNone {
						kinds = append(kinds, k)
					}
				}
			}
			if len(kinds) == 0 {
				params[f.Name] = str(profileNone)
			} else {
				params[f.Name] = str(strings.Join(kinds, ","))
			}
		case f.Kind == "props":
			var kvs []string
			for _, v := range vals {
				for _, line := range strings.Split(v, "\n") {
					line = strings.TrimSpace(line)
					if line != "" && !strings.HasPrefix(line, "#") {
						kvs = append(kvs, line)
					}
				}
			}
			if len(kvs) > 0 {
				data, _ := json.Marshal(kvs)
				params[f.Name] = data
			}
		default:
			if v := strings.TrimSpace(vals[0]); v != "" {
				params[f.Name] = str(v)
			}
		}
	}
	if count, ok := timedWorkloads[workload]; ok {
		_, hasCount := params[count]
		_, hasDuration := params["duration"]
		if !hasCount && !hasDuration {
			params["duration"] = str(FormDuration)
		}
	}
	return workload, params
}

func choiceOptions(values []string, labels map[string]string, current string) []Option {
	out := make([]Option, 0, len(values))
	for _, v := range values {
		l := labels[v]
		if l == "" {
			l = v
		}
		out = append(out, Option{Value: v, Label: l, Selected: v == current})
	}
	return out
}

func fieldID(name string) string {
	return "f-" + strings.NewReplacer(".", "-", "_", "-", " ", "-", "[", "-", "]", "").Replace(name)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// isNumber reports whether a number input can hold s: a browser blanks
// anything else, NaN and Infinity included.
func isNumber(s string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

func isTrue(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "on", "1", "yes":
		return true
	}
	return false
}

// FieldQueue is the new-run form's queue field (POST /api/runs "queue").
const FieldQueue = "queue"

// AddQueueField adds the queue field to the form's Run section, after
// the label: free text, with queues (the server's own and those of live
// workers) offered, and the submitted value or errs' message for it.
// Servers whose store no other worker shares leave it out.
func (v *NewRunFormView) AddQueueField(values url.Values, queues []string, errs map[string]string) {
	value := strings.TrimSpace(values.Get(FieldQueue))
	if value == "" && len(queues) > 0 {
		value = queues[0]
	}
	f := FormField{Name: FieldQueue, Label: "Queue", Kind: "text", Value: value, MaxLength: 128, Autocomplete: "off",
		Suggestions: queues, ListID: fieldID(FieldQueue) + "-list",
		Help: "the workers that run it: local is this server's own; live workers' queues: " + strings.Join(queues, ", ")}
	v.insertRunField(f, FieldLabel, errs)
}

// FieldWorkers is the new-run form's workers field (POST /api/runs
// "workers"), and FieldPreviewFleet its button that shows the division
// without starting anything.
const (
	FieldWorkers      = "workers"
	FieldPreviewFleet = "preview_fleet"
)

// AddWorkersField adds the workers field after the queue: a fleet run
// on a server whose store workers share.
func (v *NewRunFormView) AddWorkersField(values url.Values, errs map[string]string) {
	f := FormField{Name: FieldWorkers, Label: "Workers", Kind: "number", Value: strings.TrimSpace(values.Get(FieldWorkers)), Autocomplete: "off",
		Workloads: "producer e2e",
		Help: "a fleet run: its load divided among this many workers of the queue, a shard each, started together and merged " +
			"(2 to 10; producer and e2e rate runs on a named or bootstrap cluster); empty for one process. " +
			"\"Preview the division\" shows each shard's part without starting anything."}
	v.insertRunField(f, FieldQueue, errs)
}

// FleetPreview is a fleet run's division as the form shows it.
type FleetPreview struct {
	Workers int
	Shards  []FleetPreviewRow
}

// FleetPreviewRow is one shard's part.
type FleetPreviewRow struct {
	Shard, Partitions, Rate, Producers, Duration string
}

// NewFleetPreview describes the shards rundoc.DivideFleet made.
func NewFleetPreview(shards []rundoc.Shard) *FleetPreview {
	p := &FleetPreview{Workers: len(shards)}
	for _, sh := range shards {
		p.Shards = append(p.Shards, FleetPreviewRow{Shard: fmt.Sprintf("%d of %d", sh.Index+1, sh.Count), Partitions: shardPartitions(sh),
			Rate: shardRate(sh), Producers: strconv.Itoa(sh.Threads), Duration: numfmt.Number(sh.Duration) + " s"})
	}
	return p
}

// insertRunField wires f (value and error) and puts it in the Run section
// right after the field named after. NewRunForm put an error about the
// field, which it did not know, at the end of the summary; wire puts it
// beside the field instead.
func (v *NewRunFormView) insertRunField(f FormField, after string, errs map[string]string) {
	for i, e := range v.Errors {
		if e.Field == f.Name {
			v.Errors = append(v.Errors[:i], v.Errors[i+1:]...)
			break
		}
	}
	v.wire(&f, errs)
	for i := range v.Sections {
		sec := &v.Sections[i]
		if sec.ID != "run" {
			continue
		}
		at := len(sec.Fields)
		for j, ff := range sec.Fields {
			if ff.Name == after {
				at = j + 1
			}
		}
		sec.Fields = append(sec.Fields[:at], append([]FormField{f}, sec.Fields[at:]...)...)
		return
	}
}

// HasWorkersField reports whether the form offers fleet runs.
func (v NewRunFormView) HasWorkersField() bool {
	for _, sec := range v.Sections {
		for _, f := range sec.Fields {
			if f.Name == FieldWorkers {
				return true
			}
		}
	}
	return false
}
