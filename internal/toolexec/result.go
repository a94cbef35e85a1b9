package toolexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// ResultOptions complete what [ToResult] knows from the execution.
type ResultOptions struct {
	// Workload is the workload the output should be (a tool run's
	// template knows it); "" guesses from the command's name
	// (…consumer-perf-test… is consumer, …producer-perf-test… producer,
	// …e2e-latency… or …EndToEndLatency e2e), else the output decides, and output that is no Kafka tool's makes
	// the run rundoc.Imported (profiles and CPU only). The parsed
	// output's own tool wins over either.
	Workload rundoc.Workload
	// Meta is the run's metadata.
	Meta map[string]string
	// Profiles are the profiles written next to result.json.
	Profiles []rundoc.ProfileFile
	// Notes are added to the measurement's notes.
	Notes []string
}

// GuessWorkload is the workload a command's name says its output is:
// producer or consumer for Kafka's perf-test scripts, e2e for its
// EndToEndLatency (kafka-e2e-latency.sh, or the class
// org.apache.kafka.tools.EndToEndLatency, kafka.tools.EndToEndLatency
// before 3.x, as an argument of java or kafka-run-class.sh), ""
// otherwise.
func GuessWorkload(argv []string) rundoc.Workload {
	for _, a := range argv {
		switch b := strings.ToLower(filepath.Base(a)); {
		case strings.Contains(b, "consumer-perf-test"), strings.Contains(b, "consumerperformance"):
			return rundoc.Consumer
		case strings.Contains(b, "producer-perf-test"), strings.Contains(b, "producerperformance"):
			return rundoc.Producer
		case strings.Contains(b, "e2e-latency"), strings.Contains(b, "endtoendlatency"):
			return rundoc.E2E
		}
	}
	return ""
}

// wantTool is the Kafka tool whose output a command that did not parse
// was to print: the tool its command line names (the share consumer's
// among them, whose runs are consumer runs), else workload want's.
func wantTool(argv []string, want rundoc.Workload) string {
	if tool := rundoc.ToolCommandTool(argv); tool != "" {
		return tool
	}
	return kafkafmt.Command(string(want))
}

// ToResult turns an execution into a run document (see the package doc):
// the output's figures when it parses, the tree's CPU, the exit status,
// and on failure the error and whatever was printed.
func ToResult(e *Execution, o ResultOptions) *rundoc.Result {
	exit := e.ExitCode
	r := &rundoc.Result{Schema: rundoc.ResultSchema, StartedAt: e.Started.UTC(), FinishedAt: e.Finished.UTC(),
		Output: e.Stdout, Meta: o.Meta, Profiles: o.Profiles}
	m := &r.Measurement
	m.Source, m.Command, m.ExitCode = rundoc.SourceImported, e.Argv, &exit
	want := o.Workload
	if want == "" {
		want = GuessWorkload(e.Argv)
	}
	runBy := "run by kbench exec: " + strings.Join(e.Argv, " ")
	var failure []string
	if f := e.Failure(); f != "" {
		failure = append(failure, f)
	}
	imp, perr := kafkafmt.ParseOutput(strings.NewReader(e.Stdout))
	switch {
	case perr == nil:
		r.Workload = rundoc.Workload(kafkafmt.Workload(imp.Tool))
		addImported(r, imp)
		m.Notes = append([]string{runBy, "figures from Kafka's " + m.Tool + " output"}, imp.Notes...)
	default:
		r.Workload = want
		if r.Workload == "" {
			r.Workload = rundoc.Imported
		}
		var pe *kafkafmt.ParseError
		msg := perr.Error()
		if !errors.As(perr, &pe) && !errors.Is(perr, kafkafmt.ErrImportTooLarge) {
			msg = "reading the output: " + msg
		}
		m.Notes = append(m.Notes, runBy)
		switch {
		case e.Stdout == "":
			m.Notes = append(m.Notes, "the command printed nothing on stdout")
		case want == "":
			m.Notes = append(m.Notes, "the output is no Kafka tool's output ("+msg+"): the run holds CPU and profiles only")
		default:
			m.Notes = append(m.Notes, "the output did not parse as "+wantTool(e.Argv, want)+" output: "+msg)
		}
		if want != "" {
			failure = append(failure, "no Kafka figures: "+msg)
		}
		m.Tool = filepath.Base(e.Argv[0])
		if want != "" {
			m.Tool = wantTool(e.Argv, want)
		}
	}
	if e.StdoutCut > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("the first %d bytes of the output were dropped (kept: the last %d)", e.StdoutCut, len(e.Stdout)))
	}
	m.Notes = append(m.Notes, fmt.Sprintf("exit status %d", exit))
	m.Notes = append(m.Notes, o.Notes...)
	r.Metrics = append(r.Metrics, cpuMetrics(e.CPU)...)
	if e.CPU.Err != nil {
		m.Notes = append(m.Notes, "CPU not measured: "+e.CPU.Err.Error())
	} else {
		m.CPUSamples, m.CPUSampleMs = e.CPU.Samples, e.CPU.Interval.Milliseconds()
	}
	r.Environment = environment(m.Tool)
	r.Complete = len(failure) == 0
	r.Error = strings.Join(failure, "\n")
	return r
}

// addImported adds the parsed output's figures and intervals, as an
// import of the same output would store them.
func addImported(r *rundoc.Result, imp *kafkafmt.Imported) {
	m := &r.Measurement
	m.Tool, m.Lines = kafkafmt.Command(imp.Tool), imp.Lines
	f := imp.Figures()
	imp.Notes = append(imp.Notes, f.Notes...)
	r.Metrics = append(r.Metrics, f.Metrics...)
	r.Series = append(r.Series, f.Series...)
	m.MeasuredRecords, m.WindowSeconds = f.MeasuredRecords, f.WindowSeconds
}

// cpuMetrics are the tree's CPU figures, under the names of kbench's own
// client process figures.
func cpuMetrics(c CPU) []rundoc.Metric {
	if c.Err != nil {
		return nil
	}
	ms := []rundoc.Metric{
		{Name: "process-cpu-avg", Value: c.AvgPercent, Unit: "%", Better: rundoc.LowerIsBetter,
			Help: "CPU time of the command's whole process tree (children included) over its wall time, in % of one core"},
		{Name: "process-cpu-seconds", Value: c.CPU.Seconds(), Unit: "s", Better: rundoc.LowerIsBetter,
			Help: "user + system CPU time of the command's whole process tree"},
	}
	if c.Samples > 0 {
		// A command shorter than one sample has no p99 or maximum.
		ms = append(ms,
			rundoc.Metric{Name: "process-cpu-p99", Value: c.P99Percent, Unit: "%", Better: rundoc.LowerIsBetter,
				Help: fmt.Sprintf("99th percentile of %d CPU samples of the process tree, %v each, in %% of one core", c.Samples, c.Interval)},
			rundoc.Metric{Name: "process-cpu-max", Value: c.MaxPercent, Unit: "%", Better: rundoc.LowerIsBetter,
				Help: "highest CPU sample of the process tree, in % of one core"})
	}
	return ms
}

// environment says where the command ran: this machine, and that its
// target is the command's own.
func environment(tool string) rundoc.Environment {
	host, _ := os.Hostname()
	return rundoc.Environment{Source: rundoc.SourceImported, Tool: tool, OS: runtime.GOOS, Arch: runtime.GOARCH,
		Cores: runtime.NumCPU(), Host: host,
		Broker: "run by kbench exec: the command's own (" + tool + " does not print its environment)"}
}

// E2ECommand is what EndToEndLatency's command line says and its output
// does not: how many round trips it was asked for, of what size, with
// which acks.
type E2ECommand struct {
	Records, RecordSize int64
	Acks                string
}

// E2EArgs reads EndToEndLatency's positional arguments (broker_list
// topic num_messages producer_acks message_size_bytes
// [properties_file], what every Kafka version since 0.9 takes) after the
// word of argv naming the tool (its script, or its class as an argument
// of java or kafka-run-class.sh). ok is false when argv names no such
// tool or does not give them so (named arguments, too few, not numbers).
func E2EArgs(argv []string) (c E2ECommand, ok bool) {
	for i, a := range argv {
		if b := strings.ToLower(filepath.Base(a)); !strings.Contains(b, "e2e-latency") && !strings.Contains(b, "endtoendlatency") {
			continue
		}
		args := argv[i+1:]
		if len(args) < 5 || strings.HasPrefix(args[0], "-") {
			return E2ECommand{}, false
		}
		n, err1 := strconv.ParseInt(args[2], 10, 32)
		size, err2 := strconv.ParseInt(args[4], 10, 32)
		if err1 != nil || err2 != nil || n <= 0 || size < 0 || (args[3] != "1" && args[3] != "all") {
			return E2ECommand{}, false
		}
		return E2ECommand{Records: n, RecordSize: size, Acks: args[3]}, true
	}
	return E2ECommand{}, false
}

// Apply adds c to an EndToEndLatency run: a note of what the tool was
// given and, once it printed its summary and exited 0, the record count
// (it prints the summary only after every one of its round trips was
// checked, so its percentiles are over that many).
func (c E2ECommand) Apply(res *rundoc.Result) {
	m := &res.Measurement
	m.Notes = append(m.Notes, fmt.Sprintf("the tool was given acks=%s, %d records of %d bytes", c.Acks, c.Records, c.RecordSize))
	if res.Complete && res.Workload == rundoc.E2E && m.MeasuredRecords == 0 {
		m.MeasuredRecords, m.LatencySamples = c.Records, c.Records
	}
}
