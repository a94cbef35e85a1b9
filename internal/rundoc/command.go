package rundoc

import (
	"fmt"
	"strconv"
	"strings"
)

// RunCommand is a parsed `kbench run` command line: the spec to run
// (from the workload's flags or a spec file) and the command's own flags,
// which say how to run it and where to write, and are part of no spec.
type RunCommand struct {
	// Workload is the workload named on the command line; "" when the
	// spec came from a file (Spec.Workload has it then).
	Workload Workload
	Spec     Spec
	// Out is --out: the directory for result.json and profiles; "" for none.
	Out string
	// SpecFile is --spec: the file the spec was read from; "" for flags.
	SpecFile string
	// JSONProgress is --progress json: stdout gets Event lines instead of
	// Kafka's text.
	JSONProgress bool
	// Meta is --meta key=value, repeatable: the run's metadata.
	Meta map[string]string
	// Server is --server URL: a kbench server to store the run in when
	// it ends; "" for none. Token is --token, the server's token.
	Server, Token string
	// Workers is --workers N: with --server, the run is submitted there
	// as a fleet run of N workers of --queue instead of running here
	// (0: run here). BarrierTimeoutS is --barrier-timeout.
	Workers         int
	Queue           string
	BarrierTimeoutS float64
	// JavaHome is --java-home DIR: the JDK of the write-path lab's Java
	// strategies (its bin holds java, javac and jfr); "" for PATH. A path
	// of this machine, so it is no field of the spec.
	JavaHome string
}

// commandFlag is a flag of `kbench run` itself. ParseRunCommand reads
// these with the same lexer as the workload's flags (--name value,
// --name=value), so there is one way a kbench run argument is read.
type commandFlag struct {
	name, arg, help string
	set             func(c *RunCommand, v string) error
}

var commandFlags = []commandFlag{
	{"out", "DIR", "write result.json and profiles to DIR",
		func(c *RunCommand, v string) error { c.Out = v; return nil }},
	{"spec", "FILE", "read the spec from a JSON file (keys are flag names)",
		func(c *RunCommand, v string) error { c.SpecFile = v; return nil }},
	{"java-home", "DIR", "the JDK of the writepath java-* strategies (DIR/bin has java, javac, jfr; default: PATH)",
		func(c *RunCommand, v string) error { c.JavaHome = v; return nil }},
	{"progress", "text|json", "stdout: Kafka's text (default) or JSON lines",
		func(c *RunCommand, v string) error {
			switch v {
			case "text":
				c.JSONProgress = false
			case "json":
				c.JSONProgress = true
			default:
				return fmt.Errorf("must be text or json, got %q", v)
			}
			return nil
		}},
	{"meta", "KEY=VALUE", "tag the run (repeatable): commit=…, branch=…, version=… or any key",
		func(c *RunCommand, v string) error {
			k, val, ok := strings.Cut(v, "=")
			if !ok {
				return fmt.Errorf("%q: want key=value", v)
			}
			if _, dup := c.Meta[k]; dup {
				return fmt.Errorf("key %q given twice", k)
			}
			if err := checkMetaTag(k, val); err != nil {
				return err
			}
			if len(c.Meta) >= MaxMetaTags {
				return fmt.Errorf("at most %d tags", MaxMetaTags)
			}
			if c.Meta == nil {
				c.Meta = map[string]string{}
			}
			c.Meta[k] = val
			return nil
		}},
	{"server", "URL", "store the run in this kbench server when it ends (as kbench import DIR)",
		func(c *RunCommand, v string) error {
			if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
				return fmt.Errorf("must be an http:// or https:// URL, got %q", v)
			}
			c.Server = v
			return nil
		}},
	{"token", "T", "the --server's token (default: $KBENCH_TOKEN)",
		func(c *RunCommand, v string) error { c.Token = v; return nil }},
	{"workers", "N", "submit the run to --server as a fleet run of N workers of --queue (2 to 10, a shard each) instead of running it here",
		func(c *RunCommand, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxFleetWorkers {
				return fmt.Errorf("want a number of workers from 1 to %d, got %q", MaxFleetWorkers, v)
			}
			c.Workers = n
			return nil
		}},
	{"queue", "Q", "with --workers: the queue whose workers drive the fleet (default local)",
		func(c *RunCommand, v string) error { c.Queue = v; return nil }},
	{"barrier-timeout", "SECONDS", "with --workers: how long the fleet's first shard to be ready waits for the last (default 60)",
		func(c *RunCommand, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 1 && f <= 3600) {
				return fmt.Errorf("want seconds from 1 to 3600, got %q", v)
			}
			c.BarrierTimeoutS = f
			return nil
		}},
}

func lookupCommandFlag(name string) (commandFlag, bool) {
	for _, f := range commandFlags {
		if f.name == name {
			return f, true
		}
	}
	return commandFlag{}, false
}

// commandUsage lists the command's own flags, for Usage.
func commandUsage() string {
	var b strings.Builder
	for _, f := range commandFlags {
		fmt.Fprintf(&b, "  %-36s %s\n", "--"+f.name+" "+f.arg, f.help)
	}
	return b.String()
}

// ParseRunCommand parses the arguments of `kbench run`: a workload and its
// flags, or --spec FILE (read with getenv for its ${VAR} references) and
// no workload flags; --out and --progress go with either. -h/--help gives
// ErrHelp, with Workload set when one was named.
func ParseRunCommand(args []string, getenv func(string) string, checks ...Check) (RunCommand, error) {
	var c RunCommand
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && !Workload(args[0]).Runnable() {
		return c, NewFieldError("workload", "unknown workload %q (want producer, consumer, writepath or e2e)", args[0])
	}
	spec, err := parseArgs("", args, &c, checks)
	if err != nil {
		return c, err
	}
	switch {
	case c.Workers > 1 && c.Server == "":
		return c, NewFieldError("workers", "a fleet run is submitted to a kbench server, whose workers drive it: give --server URL")
	case c.Workers > 1 && (c.Out != "" || c.JSONProgress):
		return c, NewFieldError("workers", "a fleet run is submitted, not run here: --out and --progress json do not apply")
	case c.Workers <= 1 && (c.Queue != "" || c.BarrierTimeoutS != 0):
		return c, NewFieldError("queue", "--queue and --barrier-timeout go with --workers N (2 or more)")
	case c.SpecFile != "" && c.Workload != "":
		return c, NewFieldError("spec", "takes the whole spec; give no workload or other flags with it")
	case c.SpecFile != "":
		c.Spec, err = ReadSpecFile(c.SpecFile, getenv, checks...)
		return c, err
	case c.Workload == "":
		return c, fmt.Errorf("name a workload: producer, consumer, writepath or e2e (or give --spec FILE)")
	}
	c.Spec = spec
	return c, nil
}

// ParseCommandFlags parses kbench run's own flags alone (--out,
// --progress, --meta, --server, --token, --java-home; not a fleet's),
// for a command
// that builds its spec from something else (kbench run omb). Any other
// flag or argument, --spec among them, is an error.
func ParseCommandFlags(args []string) (RunCommand, error) {
	var c RunCommand
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		f, ok := lookupCommandFlag(name)
		if !strings.HasPrefix(args[i], "--") || !ok || f.name == "spec" || fleetFlag(f.name) {
			return c, fmt.Errorf("unexpected argument %q", args[i])
		}
		if !hasVal {
			if i+1 >= len(args) {
				return c, NewFieldError(f.name, "needs a value")
			}
			i++
			val = args[i]
		}
		if err := f.set(&c, val); err != nil {
			return c, NewFieldError(f.name, "%v", err)
		}
	}
	return c, nil
}

// IsCommandFlag reports whether name (without dashes) is one of kbench
// run's own flags that ParseCommandFlags takes.
func IsCommandFlag(name string) bool {
	f, ok := lookupCommandFlag(name)
	return ok && f.name != "spec" && !fleetFlag(f.name)
}

// fleetFlag reports whether name is one of the flags of a fleet run's
// submission, which only a workload's command line takes.
func fleetFlag(name string) bool {
	return name == "workers" || name == "queue" || name == "barrier-timeout"
}
