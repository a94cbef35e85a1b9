package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// commandFlags is a command's flag set, read the one way every kbench
// command with flags reads them (parse), its usage errors reported the
// one way (usageError). `kbench run` alone reads its flags otherwise:
// rundoc.ParseRunCommand, which also reads a queued run's command line.
type commandFlags struct {
	*flag.FlagSet
	// name prefixes every message: "kbench serve".
	name   string
	stderr io.Writer
	// showUsage: a usage error is followed by the command's usage
	// (import, exec and check, whose usage is their manual); serve,
	// worker and broker print the error alone.
	showUsage bool
	// operands says where the arguments other than flags may be.
	operands operandRule
	// env says which flags a KBENCH_* variable sets when the command
	// line does not (fromEnv); nil for none.
	env func(flagName string) bool
	// envChecks vet the items of repeatable flags' variables, by flag
	// name (fromEnv's check).
	envChecks map[string]func([]string) error

	// from says, once parsed, where each flag's value came from: "--flag"
	// or its variable (KBENCH_FLAG), for the messages of later checks.
	from map[string]string
	// args are, once parsed, the arguments besides the flags.
	args []string
}

// operandRule says where a command's arguments other than flags may be.
type operandRule int

const (
	// noOperands: any argument is a usage error.
	noOperands operandRule = iota
	// operandsAfterFlags: the first argument ends the flags (exec's
	// command and its own flags).
	operandsAfterFlags
	// operandsAnywhere: flags may also follow arguments (import's FILE).
	operandsAnywhere
)

// everyFlag is the env of serve and worker: every flag has its variable.
func everyFlag(string) bool { return true }

// theseFlags is an env of only the named flags.
func theseFlags(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// newFlags returns name's flags; usage is what -h prints before the
// flags' list (and a usage error after the error, with showUsage).
func newFlags(name, usage string, stderr io.Writer) *commandFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return &commandFlags{FlagSet: fs, name: name, stderr: stderr}
}

// parse reads args: the flags, the other arguments as f.operands allows,
// then the variables of f.env, each bad one reported. ok false means the
// command ends with code: 0 after -h, 2 after a usage error
// (reported: the flag package prints its own errors with the usage).
func (f *commandFlags) parse(args []string) (code int, ok bool) {
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0, false
			}
			return 2, false
		}
		if f.operands != operandsAnywhere || f.NArg() == 0 {
			break
		}
		f.args = append(f.args, f.Arg(0))
		args = f.Args()[1:]
	}
	switch f.operands {
	case noOperands:
		if f.NArg() > 0 {
			return f.usageError("unexpected argument %q", f.Arg(0)), false
		}
	case operandsAfterFlags:
		f.args = f.Args()
	}
	env := f.env
	if env == nil {
		env = func(string) bool { return false }
	}
	from, errs := fromEnv(f.FlagSet, os.LookupEnv, env, f.envChecks)
	for _, err := range errs {
		fmt.Fprintf(f.stderr, "%s: %v\n", f.name, err)
	}
	if len(errs) > 0 {
		return 2, false
	}
	f.from = from
	return 0, true
}

// usageError reports a usage error, "kbench CMD: message" and, with
// showUsage, the usage, and returns 2, the exit code of bad usage.
func (f *commandFlags) usageError(format string, a ...any) int {
	fmt.Fprintf(f.stderr, "%s: %s\n", f.name, fmt.Sprintf(format, a...))
	if f.showUsage {
		fmt.Fprintln(f.stderr)
		f.Usage()
	}
	return 2
}

// argError reports what an argument names that cannot be used (a file
// that cannot be read, a JDK that is missing), without the usage: the
// usage is right, the machine is not. It returns 2 all the same.
func (f *commandFlags) argError(err error) int {
	fmt.Fprintf(f.stderr, "%s: %v\n", f.name, err)
	return 2
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// envOr returns the KBENCH_* variable for a flag, or def: `kbench run
// --server`'s token, read by rundoc.ParseRunCommand's caller rather than
// by a flag set.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(envName(name)); ok {
		return v
	}
	return def
}

// envName is the variable that sets a flag: KBENCH_ and the flag's
// name in capitals with - as _ (--run-timeout: KBENCH_RUN_TIMEOUT).
func envName(flagName string) string {
	return "KBENCH_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// fromEnv gives each flag of fs that env accepts and the command line did
// not set the value of its variable (envName), read with lookup, through
// the flag's own Set: a variable takes exactly what its flag takes. An
// empty variable counts as unset. A repeatable flag (listFlag) takes a
// comma-separated list from its variable, and the command line's values
// are added after it; check, where it has an entry for the flag, vets
// the variable's items.
//
// It returns where each flag's value came from, "--flag" or the variable,
// for the messages of later checks, and one error per bad variable, each
// naming it.
func fromEnv(fs *flag.FlagSet, lookup func(string) (string, bool), env func(string) bool, check map[string]func([]string) error) (map[string]string, []error) {
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	from := map[string]string{}
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		from[f.Name] = "--" + f.Name
		if !env(f.Name) {
			return
		}
		name := envName(f.Name)
		v, ok := lookup(name)
		if !ok || v == "" {
			return
		}
		if list, ok := f.Value.(*listFlag); ok {
			items := splitList(v)
			if c := check[f.Name]; c != nil {
				if err := c(items); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", name, err))
					return
				}
			}
			*list = append(items, *list...)
			if !onCommandLine[f.Name] {
				from[f.Name] = name
			}
			return
		}
		if onCommandLine[f.Name] {
			return // the flag wins; its variable is not read
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not %s (it sets --%s)", name, v, valueKind(f.Value), f.Name))
			return
		}
		from[f.Name] = name
	})
	return from, errs
}

// valueKind says what a flag's value must be, for messages.
func valueKind(v flag.Value) string {
	if g, ok := v.(flag.Getter); ok {
		switch g.Get().(type) {
		case bool:
			return "true or false"
		case int:
			return "a whole number"
		case time.Duration:
			return "a duration such as 90m or 2h"
		}
	}
	return "a value it takes"
}

// splitList splits a comma-separated KBENCH_* list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// splitLists splits comma lists inside repeated flags.
func splitLists(vs []string) []string {
	var out []string
	for _, v := range vs {
		out = append(out, splitList(v)...)
	}
	return out
}

// maxRetainDays bounds --retain: a century is "forever" for benchmark runs,
// and the bound keeps DAYS×24h far from time.Duration's limit.
const maxRetainDays = 36500

// parseRetain reads --retain: a whole number of days, 0 (keep forever) up
// to maxRetainDays; empty is 0.
func parseRetain(v string) (time.Duration, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil // KBENCH_RETAIN set but empty: as if absent
	}
	days, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || days < 0 || days > maxRetainDays {
		return 0, fmt.Errorf("%q is not a number of days from 0 (keep runs forever) to %d", v, maxRetainDays)
	}
	return time.Duration(days) * 24 * time.Hour, nil
}
