package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/clusters"
	"github.com/kbench/kbench/internal/targets"
	"github.com/kbench/kbench/internal/toolcatalog"
	"github.com/kbench/kbench/runner"
)

// clusterUsage is the --cluster flag's help, serve's and worker's.
const clusterUsage = "NAME=FILE: a Kafka cluster runs may target by name, FILE its client properties (bootstrap.servers, security.protocol, sasl.*, ssl.*), read on this machine only, again at each run's start (repeatable)"

// toolUsage is the --tool flag's help, serve's and worker's.
const toolUsage = "NAME=PATH, NAME=KIND:PATH or NAME=KIND@VERSION:PATH: a Kafka tool runs may name (\"tool\"), run with an argument template filled from the run's fields; KIND is producer-perf-test, consumer-perf-test, share-consumer-perf-test or e2e-latency, else told from PATH's name (kafka-producer-perf-test.sh, kafka-e2e-latency.sh); VERSION (4.2) makes the template use Kafka 4.2's flag names; PATH must be executable (repeatable)"

// execFlags are the flags of a process that executes runs, read and
// checked the same way by kbench serve (for its local worker) and kbench
// worker.
type execFlags struct {
	concurrency *int
	runTimeout  *time.Duration
	allow       listFlag
	clusters    listFlag
	tools       listFlag
	// classProps is --allow-tool-class-props.
	classProps *bool
	// toolSet is --tool's set, once check has read it.
	toolSet *toolcatalog.Set
	// targets is --allow-target's policy, once check has parsed it.
	targets *targets.Policy
}

// addExecFlags defines them on fs; allowUsage is --allow-target's help,
// which says what each command does with a target it does not allow.
func addExecFlags(fs *flag.FlagSet, allowUsage string) *execFlags {
	e := &execFlags{
		concurrency: fs.Int("concurrency", 1, "runs executed at once (more than one makes runs share CPU)"),
		runTimeout:  fs.Duration("run-timeout", 2*time.Hour, "longest a run may take"),
	}
	fs.Var(&e.allow, "allow-target", allowUsage)
	fs.Var(&e.clusters, "cluster", clusterUsage)
	fs.Var(&e.tools, "tool", toolUsage)
	e.classProps = fs.Bool("allow-tool-class-props", false, "let Kafka tool runs (--tool) take the Java client's class-name and config-provider properties (*.class, *.classes, config.providers, metric.reporters, the serializers, …), which load classes or read files on this machine; refused without")
	return e
}

// envChecks are fromEnv's checks of their variables' lists.
func (e *execFlags) envChecks() map[string]func([]string) error {
	return map[string]func([]string) error{
		"allow-target": func(p []string) error { _, err := targets.Parse(p); return err },
		"cluster":      func(c []string) error { _, err := clusters.Parse(c, runner.ValidateWithFiles); return err },
		"tool":         func(t []string) error { _, err := toolcatalog.Parse(t); return err },
	}
}

// check checks the values once flags and variables are read (from names
// where each came from), reporting each problem on stderr prefixed with
// cmd; it returns the named clusters, and ok false after a problem. It
// keeps the parsed --tool and --allow-target values in toolSet and
// targets.
func (e *execFlags) check(cmd string, from map[string]string, stderr io.Writer) (named *clusters.Set, ok bool) {
	if *e.concurrency < 1 {
		fmt.Fprintf(stderr, "%s: %s: must be at least 1, got %d\n", cmd, from["concurrency"], *e.concurrency)
		return nil, false
	}
	if *e.runTimeout <= 0 {
		fmt.Fprintf(stderr, "%s: %s: must be positive (such as 2h), got %v\n", cmd, from["run-timeout"], *e.runTimeout)
		return nil, false
	}
	allowed, err := targets.Parse(e.allow)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return nil, false
	}
	named, err = clusters.Parse(e.clusters, runner.ValidateWithFiles)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") { // one a bad value
			fmt.Fprintf(stderr, "%s: %s %s\n", cmd, from["cluster"], line)
		}
		return nil, false
	}
	tools, err := toolcatalog.Parse(e.tools)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") { // one a bad value
			fmt.Fprintf(stderr, "%s: %s %s\n", cmd, from["tool"], line)
		}
		return nil, false
	}
	e.toolSet, e.targets = tools, allowed
	return named, true
}

// allowsStored checks a stored run's spec against the --allow-target
// policy of command (kbench serve or kbench worker), as the bad
// bootstrap-server field that the server which queued the run would have
// reported; a target the command's own flag would allow says so.
func allowsStored(p *targets.Policy, command string) func(spec string) error {
	return func(spec string) error {
		if err := p.AllowsStored(spec, runner.Validate); err != nil {
			return fmt.Errorf("bootstrap-server: %w", targets.Explain(err, command))
		}
		return nil
	}
}
