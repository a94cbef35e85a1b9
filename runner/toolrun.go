package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/toolcatalog"
	"github.com/kbench/kbench/internal/toolexec"
)

// RunTool executes a run whose spec names a Kafka tool (rundoc.Spec.Tool)
// instead of kbench's client: the child of a queued run (`kbench run
// --spec spec.json --out DIR --progress json`, spawned by the lifecycle).
// The tool's program comes from this process's environment
// (toolcatalog.EnvVar, which serve or the worker sets from its --tool
// flags), never from the spec. Its secrets go to a properties file in
// --out, mode 0600, removed when the tool has ended; its stdout lines go
// out as output events; toolexec samples its process tree's CPU and
// turns its output into result.json, which the lifecycle ingests as for
// kbench's own runs. A tool that fails ends the run failed, with its
// exit status, the end of its stderr and what it printed. Its events go
// through the run's reporter, as kbench's own runs' do: with --progress
// json stdout is a stream of events, else it gets the tool's output as
// the tool prints it. The result is the process's exit status: 0, 1 (the
// run failed) or 2 (the command line cannot run a tool).
func RunTool(ctx context.Context, cmd rundoc.RunCommand, stdout, stderr io.Writer) int {
	spec := cmd.Spec
	prefix := "kbench run " + string(spec.Workload)
	switch {
	case cmd.Out == "":
		fmt.Fprintf(stderr, "%s: tool %s: a Kafka tool's run needs --out DIR (its result and properties file go there)\n", prefix, spec.Tool)
		return 2
	case cmd.Server != "":
		fmt.Fprintf(stderr, "%s: tool %s: --server: store a tool's run with kbench exec, or queue it on the server\n", prefix, spec.Tool)
		return 2
	}
	rep := &reporter{stdout: stdout, stderr: stderr, json: cmd.JSONProgress}
	res, err := executeTool(ctx, spec, cmd, rep, stderr)
	if err != nil {
		// The tool never ran: the run fails saying why, in result.json
		// too, so the run's page shows it beside the spec.
		res = &rundoc.Result{Workload: spec.Workload, Spec: spec, StartedAt: time.Now().UTC(), FinishedAt: time.Now().UTC(), Error: err.Error()}
	}
	if werr := rundoc.WriteResult(cmd.Out, res); werr != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, werr)
		return 1
	}
	rep.emit(rundoc.Event{Type: rundoc.EventDone, Complete: res.Complete, Error: res.Error})
	if !res.Complete {
		fmt.Fprintf(stderr, "%s: tool %s: %s\n", prefix, spec.Tool, res.Error)
		return 1
	}
	return 0
}

// executeTool runs the tool and returns its result; an error means it
// did not run.
func executeTool(ctx context.Context, spec rundoc.Spec, cmd rundoc.RunCommand, rep *reporter, stderr io.Writer) (*rundoc.Result, error) {
	tools, err := toolcatalog.FromEnv(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", spec.Tool, err)
	}
	tool, ok := tools.Get(spec.Tool)
	if !ok {
		return nil, errors.New(toolcatalog.UnknownMessage(spec.Tool, tools.Names()))
	}
	if tool.Kind.Workload() != spec.Workload {
		return nil, fmt.Errorf("tool %s is a %s, not a %s run", spec.Tool, tool.Kind, spec.Workload)
	}
	// Java's client reads the TLS files itself, without kbench's limits:
	// read them first as kbench's client would (regular files of at
	// most 1 MiB), so a file kbench refuses never reaches the tool.
	var fileErrs rundoc.FieldErrors
	ValidateWithFiles(&spec, &fileErrs)
	if err := fileErrs.Err(); err != nil {
		return nil, fmt.Errorf("tool %s: %w", spec.Tool, err)
	}
	conf, err := toolcatalog.WriteConfig(cmd.Out, toolcatalog.ConfigProps(tool.Kind, spec.Props))
	if err != nil {
		return nil, err
	}
	if conf != "" {
		defer os.Remove(conf)
	}
	args, err := toolcatalog.Args(tool.Kind, tool.Version, spec, conf)
	if err != nil {
		return nil, err
	}
	argv := append([]string{tool.Path}, args...)
	// Secrets go nowhere but the properties file: the collected values
	// (the file's among them) are replaced in everything kept or shown.
	secrets := toolexec.Secrets(argv, nil)
	_, own := rundoc.SplitSecrets(spec)
	for _, v := range own {
		secrets = append(secrets, v)
	}
	rep.phase("measure", spec.NumRecords)
	// An event only, never a line on stderr: the tool's own stderr goes
	// there.
	rep.emit(rundoc.Event{Type: rundoc.EventNote, Text: fmt.Sprintf("running %s (tool %s, Kafka's %s)",
		strings.Join(toolexec.RedactArgs(argv, secrets), " "), tool.Name, tool.Kind.Script())})
	out := &lineEvents{rep: rep}
	ex, err := toolexec.Run(ctx, toolexec.Command{Argv: argv, Env: toolEnv(), Dir: cmd.Out, Stdout: out, Stderr: stderr, Secrets: secrets})
	if err != nil {
		return nil, err
	}
	out.flush()
	res := toolexec.ToResult(ex, toolexec.ResultOptions{Workload: spec.Workload, Meta: cmd.Meta,
		Notes: []string{fmt.Sprintf("a queued run of tool %s (Kafka's %s, --tool on the worker), its arguments filled from the run's fields", tool.Name, tool.Kind.Script())}})
	res.Spec = spec
	if tool.Kind == toolcatalog.E2ELatency {
		e2eMeasured(res, spec)
	}
	res.Environment.Broker = "the run's target: " + strings.Join(spec.Targets(), ",")
	if spec.Cluster != "" {
		res.Environment.Broker = "the named cluster " + spec.Cluster
	}
	return res, nil
}

// e2eMeasured adds to an EndToEndLatency run what the spec gave its
// command line (toolexec.E2ECommand): its kind is known here even when
// its path's name does not say it.
func e2eMeasured(res *rundoc.Result, spec rundoc.Spec) {
	acks, err := toolcatalog.E2EAcks(spec.Props)
	if err != nil {
		return // Args refused it: the tool never ran
	}
	toolexec.E2ECommand{Records: spec.NumRecords, RecordSize: int64(spec.RecordSize), Acks: acks}.Apply(res)
}

// toolEnv is this process's environment without what is for kbench only:
// the run's secret properties (the tool reads them from its properties
// file), the machine's tools and kbench's own secrets
// (toolexec.ChildEnv: the server's token, database URL, webhook).
func toolEnv() []string {
	var env []string
	for _, kv := range toolexec.ChildEnv(os.Environ()) {
		if !strings.HasPrefix(kv, rundoc.SecretPropsEnv+"=") && !strings.HasPrefix(kv, toolcatalog.EnvVar+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// lineEvents cuts the tool's stdout into lines, each passed on as
// Kafka-format output (an output event with --progress json).
type lineEvents struct {
	rep *reporter
	buf []byte
}

// maxLine bounds a line held back waiting for its end.
const maxLine = 64 << 10

func (l *lineEvents) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.rep.kafka(string(l.buf[:i+1]))
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > maxLine {
		l.flush()
	}
	return len(p), nil
}

// flush passes on a last line without its end.
func (l *lineEvents) flush() {
	if len(l.buf) > 0 {
		l.rep.kafka(string(l.buf) + "\n")
		l.buf = nil
	}
}
