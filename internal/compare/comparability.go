package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/kbench/kbench/internal/numfmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// A Difference is a setting whose value is not the same in every column
// of a comparison: the figures may differ because of it rather than
// because of what the columns were meant to compare.
type Difference struct {
	Setting string
	// Values has one entry per column: the value its runs recorded, ""
	// when none of them recorded it, "mixed: a, b" when they disagree.
	Values []string
}

// LoadAverageSpan is the smallest spread of the 1-minute load averages at
// the start of the compared runs that is reported as a difference: one
// whole CPU's worth of runnable tasks, which on the small machines
// benchmarks often run on is a large share of the machine. Smaller
// differences are the ordinary drift of a machine between runs.
const LoadAverageSpan = 1.0

// loadAverageSetting names the load average among the differences.
const loadAverageSetting = "load average (1 min) at start"

// ComparabilityRule says, for the table's notes and the docs, what the
// comparability check compares.
const ComparabilityRule = "Settings compared across columns: the client (kbench, or the Java tool an import or kbench exec ran, with what its command line says), the workload and its spec (except topic and group names, the bootstrap servers, " +
	"the profiles captured and how results are printed), the kbench mode, the client configuration each run recorded after defaults, " +
	"the target (embedded broker or sink with its settings, or cluster by its bootstrap servers as a set), the broker's release guess and the API ranges kbench's clients use, " +
	"the kbench, Go and kafka-go builds, OS, kernel, CPU model, cores and GOMAXPROCS; the 1-minute load average at start when the runs' values span ≥ 1.0. " +
	"The client, record size, record count and acks are listed as unknown where a run does not say them and another does. " +
	"Not compared: times, host names, the address an embedded broker or sink listened on, the order of bootstrap servers, and anything else a run did not record."

// specIgnored are spec parameters that name things or choose what is
// printed or captured: runs differing only in them measure the same work.
// props and config-file are compared through the resolved configuration,
// bootstrap-server through the target.
// timeout only bounds how long a consumer waits for a record.
var specIgnored = map[string]bool{
	"topic": true, "group": true, "bootstrap-server": true, "props": true, "config-file": true,
	"profile": true, "print-metrics": true, "reporting-interval": true, "show-detailed-stats": true,
	"timeout": true,
}

// specInConfig are spec parameters a recorded configuration holds under
// Kafka's property name (fetch-size is max.partition.fetch.bytes,
// from-latest is auto.offset.reset): with a configuration they are not
// listed twice.
var specInConfig = map[string]bool{"fetch-size": true, "from-latest": true}

// comparedAPIs are the API keys whose ranges are compared: the requests
// kbench's producer, consumers and write path send. A difference in one
// of them can change what the client does on the wire.
var comparedAPIs = map[int]bool{
	0: true, 1: true, 2: true, 3: true, 8: true, 9: true, 10: true, 11: true, 12: true, 13: true, 14: true,
	17: true, 18: true, 19: true, 36: true,
}

// fact is one compared setting of a run.
type fact struct{ name, value string }

// facts is a run's settings in the order they are listed.
type facts struct {
	list []fact
	// config is whether the run recorded its resolved configuration.
	config bool
	load1  *float64
}

func (f *facts) add(name, value string) {
	if value == "" {
		return
	}
	for i := range f.list {
		if f.list[i].name == name {
			f.list[i].value = value
			return
		}
	}
	f.list = append(f.list, fact{name, value})
}

// runFacts reads what a run recorded about how it ran. An imported run
// keeps only what its source printed: nothing is derived for it.
func runFacts(r rundoc.Run) facts {
	var f facts
	f.add("workload", string(r.Workload))
	// A run without an environment it can read (queued, or one this code
	// cannot decode) recorded nothing of how it ran.
	var env rundoc.Environment
	if r.Environment != nil {
		env = *r.Environment
	}
	imported := env.Source == rundoc.SourceImported || !r.MeasuredByKbench()
	f.add(clientSetting, clientText(r, env, imported))
	if imported {
		// What the tool's command line says (kbench exec, tool runs, an
		// import's command field), under kbench's names.
		for _, s := range rundoc.ToolCommandSettings(runCommand(r)) {
			f.add(s.Name, s.Value)
		}
	}
	if !imported && env.Config != nil {
		f.config = true
		f.add("mode", env.Config.Mode)
		for _, s := range env.Config.Settings {
			f.add(s.Name, s.Value)
		}
	}
	for _, p := range specParams(r.Spec) {
		if f.config && specInConfig[p.name] {
			continue
		}
		if _, ok := f.get(p.name); !ok {
			f.add(p.name, p.value)
		}
	}
	if imported {
		return f
	}
	f.add("target", targetText(env))
	if t := env.Target; t != nil {
		f.add("broker release (guess)", t.ReleaseGuess)
		for _, a := range t.APIVersions {
			if comparedAPIs[int(a.Key)] {
				name := a.Name
				if name == "" {
					name = "key " + strconv.Itoa(int(a.Key))
				}
				f.add("broker API "+name, fmt.Sprintf("%d–%d", a.Min, a.Max))
			}
		}
	}
	f.add("kbench version", env.KbenchVersion)
	f.add("kbench build", env.KbenchBuild)
	f.add("Go version", env.GoVersion)
	f.add("kafka-go version", env.KafkaGoVersion)
	if env.OS != "" || env.Arch != "" {
		f.add("OS/arch", strings.Trim(env.OS+"/"+env.Arch, "/"))
	}
	f.add("kernel", env.Kernel)
	f.add("CPU model", env.CPUModel)
	if env.Cores > 0 {
		f.add("cores", strconv.Itoa(env.Cores))
	}
	if env.GOMAXPROCS > 0 {
		f.add("GOMAXPROCS", strconv.Itoa(env.GOMAXPROCS))
	}
	if la := env.LoadAverage; la != nil && !math.IsNaN(la.Load1) && !math.IsInf(la.Load1, 0) {
		v := la.Load1
		f.load1 = &v
	}
	return f
}

// clientSetting names the client that made the load: kbench's, or a
// Java tool of Kafka's.
const clientSetting = "client"

// keySettings are the settings that decide what a figure means (who
// sent, how many records of what size, waiting for which acks): one a
// run does not know is listed as unknown beside the others' values, and
// said in a note, where other unknown settings are only not compared.
var keySettings = []struct{ name, text string }{
	{clientSetting, "client"}, {"record-size", "record size"}, {"num-records", "record count"}, {"acks", "acks"},
}

func isKeySetting(name string) bool {
	for _, k := range keySettings {
		if k.name == name {
			return true
		}
	}
	return false
}

// clientText is the client that made a run's load: kbench's own, or the
// Kafka tool whose output was imported or that kbench exec or a tool run
// ran (Java); "" when the run does not say (a CSV row, a table column).
func clientText(r rundoc.Run, env rundoc.Environment, imported bool) string {
	if !imported {
		return "kbench"
	}
	tool := env.Tool
	if r.Measurement != nil && tool == "" {
		tool = r.Measurement.Tool
	}
	if t := rundoc.ToolCommandTool(runCommand(r)); t != "" {
		tool = t
	}
	switch tool {
	case "kafka-producer-perf-test", "kafka-consumer-perf-test", "kafka-e2e-latency":
		return "Java " + tool
	case rundoc.ToolOMB:
		return "Java (OpenMessaging Benchmark)"
	}
	return ""
}

// isOMB reports whether a run was imported from an OpenMessaging
// Benchmark result.
func isOMB(r rundoc.Run) bool {
	return r.Environment != nil && r.Environment.Tool == rundoc.ToolOMB || r.Measurement != nil && r.Measurement.Tool == rundoc.ToolOMB
}

// ombNote says which compared runs are OMB results, and what that means
// for reading them beside kbench's: another client made the load, and
// their end-to-end latency has whole milliseconds only. "" when none is.
func ombNote(measured [][]rundoc.Run) string {
	var ids []uint
	for _, runs := range measured {
		for _, r := range runs {
			if isOMB(r) {
				ids = append(ids, r.ID)
			}
		}
	}
	if len(ids) == 0 {
		return ""
	}
	n := len(ids)
	return fmt.Sprintf("%s %s %s OpenMessaging Benchmark %s: the load came from OMB's driver (the Java client), not kbench's, "+
		"and OMB times end-to-end latency by the wall clock in whole milliseconds, so e2e differences under 1 ms against kbench's µs are not measured. "+
		"OMB's quantile maps have no counts: they are drawn beside the histograms, never merged.",
		numfmt.Plural(n, "Run", "Runs"), idList(ids), numfmt.Plural(n, "is an", "are"), numfmt.Plural(n, "result", "results"))
}

// runCommand is the command line a run recorded, nil when none.
func runCommand(r rundoc.Run) []string {
	if r.Measurement == nil {
		return nil
	}
	return r.Measurement.Command
}

// unknownReason says why a run does not know a key setting.
func unknownReason(r rundoc.Run, name string) string {
	var env rundoc.Environment
	if r.Environment != nil {
		env = *r.Environment
	}
	switch {
	case env.Source != rundoc.SourceImported && r.MeasuredByKbench():
		return "not recorded by the run"
	case env.Tool == "csv":
		return "imported from a CSV row, which does not say"
	case env.Tool == "table":
		return "imported from a table, which does not say"
	case env.Tool == rundoc.ToolOMB:
		return "imported from an OpenMessaging Benchmark result, which does not say"
	case len(runCommand(r)) == 0:
		return "imported without a command line"
	case name == "acks":
		return "not on its command line, and the Java producer's default depends on its version (all since Kafka 3.0, 1 before)"
	}
	return "not on its command line"
}

// unknownSettingsNotes say, run by run, which key settings a run does
// not know that another compared run does, and why: "Run 12's record
// size is unknown (imported without a command line)."
// fsByColumn are the runs' facts (measuredFacts).
func unknownSettingsNotes(measured [][]rundoc.Run, fsByColumn [][]facts) []string {
	var all []rundoc.Run
	var fs []facts
	known := map[string]bool{}
	for ci, runs := range measured {
		for ri, r := range runs {
			f := fsByColumn[ci][ri]
			all, fs = append(all, r), append(fs, f)
			for _, x := range f.list {
				known[x.name] = true
			}
		}
	}
	var notes []string
	for i, r := range all {
		var missing []string
		reason := ""
		for _, k := range keySettings {
			if _, ok := fs[i].get(k.name); ok || !known[k.name] {
				continue
			}
			missing = append(missing, k.text)
			if reason == "" {
				reason = unknownReason(r, k.name)
			}
		}
		if len(missing) == 0 {
			continue
		}
		verb := "is"
		if len(missing) > 1 {
			verb = "are"
		}
		notes = append(notes, fmt.Sprintf("Run #%d's %s %s unknown (%s).", r.ID, joinAnd(missing), verb, reason))
	}
	return notes
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(v []string) string {
	if len(v) < 2 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " and " + v[len(v)-1]
}

func (f *facts) get(name string) (string, bool) {
	for _, x := range f.list {
		if x.name == name {
			return x.value, true
		}
	}
	return "", false
}

// targetText is what a run talked to (rundoc.TargetIdentity): the
// embedded broker or sink with its settings, or a cluster by its name and
// bootstrap servers as a set; never the port a child broker picked.
func targetText(env rundoc.Environment) string {
	return rundoc.TargetIdentity(&env)
}

// specParams are a stored spec's parameters that define the workload, as
// text, sorted by name.
func specParams(spec string) []fact {
	var doc struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(spec), &doc); err != nil || doc.Params == nil {
		return nil
	}
	var out []fact
	for k, raw := range doc.Params {
		if specIgnored[k] {
			continue
		}
		if v := paramText(raw); v != "" {
			out = append(out, fact{k, v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// paramText is a JSON value as a setting's text: strings unquoted, lists
// joined by commas, anything else as compact JSON.
func paramText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ",")
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
}

// measuredFacts reads each run's facts once, per column, for
// comparability and unknownSettingsNotes.
func measuredFacts(measured [][]rundoc.Run) [][]facts {
	out := make([][]facts, len(measured))
	for ci, runs := range measured {
		for _, r := range runs {
			out[ci] = append(out[ci], runFacts(r))
		}
	}
	return out
}

// comparability lists the settings that differ between the columns, and
// the runs that recorded no configuration (their columns' values come
// from the spec and environment alone, or are unknown).
// runFactsList are the runs' facts (measuredFacts).
func comparability(measured [][]rundoc.Run, runFactsList [][]facts) (diffs []Difference, unknown []uint) {
	type cell struct {
		values []string // distinct, in run order
	}
	var order []string
	cells := map[string][]cell{}
	var loads [][]float64
	for ci, runs := range measured {
		loads = append(loads, nil)
		for ri, r := range runs {
			f := runFactsList[ci][ri]
			if !f.config {
				unknown = append(unknown, r.ID)
			}
			if f.load1 != nil {
				loads[ci] = append(loads[ci], *f.load1)
			}
			for _, x := range f.list {
				cs, ok := cells[x.name]
				if !ok {
					cs = make([]cell, len(measured))
					cells[x.name] = cs
					order = append(order, x.name)
				}
				if !slices.Contains(cs[ci].values, x.value) {
					cs[ci].values = append(cs[ci].values, x.value)
				}
			}
		}
	}
	for _, name := range order {
		d := Difference{Setting: name, Values: make([]string, len(measured))}
		listed, seen := false, ""
		for ci, c := range cells[name] {
			if isKeySetting(name) {
				// A key setting some run does not know is listed: the
				// columns may differ in it.
				lacking := 0
				for _, f := range runFactsList[ci] {
					if _, ok := f.get(name); !ok {
						lacking++
					}
				}
				switch {
				case lacking == len(runFactsList[ci]):
					listed = true
					continue
				case lacking > 0:
					d.Values[ci] = "mixed: " + strings.Join(append(append([]string(nil), c.values...), "unknown"), ", ")
					listed = true
					continue
				}
			}
			switch len(c.values) {
			case 0:
				continue
			case 1:
				d.Values[ci] = c.values[0]
			default:
				d.Values[ci] = "mixed: " + strings.Join(c.values, ", ")
				listed = true
			}
			if seen != "" && d.Values[ci] != seen {
				listed = true
			}
			seen = d.Values[ci]
		}
		if listed {
			diffs = append(diffs, d)
		}
	}
	if d, ok := loadDifference(loads); ok {
		diffs = append(diffs, d)
	}
	return diffs, unknown
}

// loadDifference lists the load averages at start when they span at
// least LoadAverageSpan over all compared runs.
func loadDifference(loads [][]float64) (Difference, bool) {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, vs := range loads {
		for _, v := range vs {
			lo, hi, n = math.Min(lo, v), math.Max(hi, v), n+1
		}
	}
	if n < 2 || hi-lo < LoadAverageSpan {
		return Difference{}, false
	}
	d := Difference{Setting: loadAverageSetting, Values: make([]string, len(loads))}
	for i, vs := range loads {
		if len(vs) == 0 {
			continue
		}
		a, b := slices.Min(vs), slices.Max(vs)
		d.Values[i] = strconv.FormatFloat(a, 'f', 2, 64)
		if b != a {
			d.Values[i] += "–" + strconv.FormatFloat(b, 'f', 2, 64)
		}
	}
	return d, true
}

// comparabilityNote says which runs recorded no configuration, "" when
// every run did.
func comparabilityNote(unknown []uint) string {
	if len(unknown) == 0 {
		return ""
	}
	n := len(unknown)
	return fmt.Sprintf("%s %s %s no recorded configuration (imported, or run before kbench recorded it): "+
		"only what %s spec and environment say is compared.",
		numfmt.Plural(n, "Run", "Runs"), idList(unknown), numfmt.Plural(n, "has", "have"), numfmt.Plural(n, "its", "their"))
}
