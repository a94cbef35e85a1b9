package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/ombwork"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/runner"
)

const runOMBUsage = `usage: kbench run omb WORKLOAD.yaml DRIVER.yaml [flags]

Runs an OpenMessaging Benchmark (OMB) Kafka workload with kbench's
clients: the workload file's topics, partitions, producers,
subscriptions and consumers, message size, payload, keys, rate,
backlog, warm-up and duration, on the driver file's cluster
(commonConfig's bootstrap.servers) with its topic configs, replication
factor and client properties. The run is kbench's e2e workload in rate
mode; its notes say how the files were read, and list every property
of the driver kbench's client does not apply. A workload field kbench
cannot honour is an error naming it.

flags:
  --duration S              seconds to measure, in place of testDurationMinutes
  --warmup S                seconds of warm-up, in place of warmupDurationMinutes (0: none)
  --payload FILE            the payload file, in place of the workload's payloadFile
                            (which is read from the current directory, else beside the workload file)
  --bootstrap-server ADDR   the cluster, in place of commonConfig's bootstrap.servers
  --embedded                kbench's embedded broker instead, as many brokers as replicationFactor
  --topic NAME              the topics' prefix (default ` + ombwork.DefaultTopic + `): NAME-0000, …, created fresh and deleted after
  --profile LIST            profiles to capture (as kbench run e2e)
  --profile-windows on|off  as kbench run e2e
  --reporting-interval MS   as kbench run e2e
`

// ombFlags are the flags of kbench run omb besides kbench run's own,
// each with whether it takes a value.
var ombFlags = map[string]bool{"duration": true, "warmup": true, "payload": true, "bootstrap-server": true, "embedded": false,
	"topic": true, "profile": true, "profile-windows": true, "reporting-interval": true}

// cmdRunOMB is `kbench run omb WORKLOAD.yaml DRIVER.yaml [flags]`.
func cmdRunOMB(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prefix = "kbench run omb"
	var files, cmdArgs []string
	given := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprint(stdout, runOMBUsage)
			return 0
		}
		if !strings.HasPrefix(a, "-") {
			files = append(files, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takes, ours := ombFlags[name]
		switch {
		case ours && !takes:
			given[name] = "true"
		case ours && hasVal:
			given[name] = val
		case ours && i+1 < len(args):
			i++
			given[name] = args[i]
		case ours:
			fmt.Fprintf(stderr, "%s: --%s needs a value\n", prefix, name)
			return 2
		case rundoc.IsCommandFlag(name):
			cmdArgs = append(cmdArgs, a)
			if !hasVal && i+1 < len(args) {
				i++
				cmdArgs = append(cmdArgs, args[i])
			}
		default:
			fmt.Fprintf(stderr, "%s: unknown flag %s (see kbench run omb --help)\n", prefix, a)
			return 2
		}
	}
	if len(files) != 2 {
		fmt.Fprintf(stderr, "%s: give the workload file and the driver file, got %d file(s)\n\n%s", prefix, len(files), runOMBUsage)
		return 2
	}
	cmd, err := rundoc.ParseCommandFlags(cmdArgs)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return 2
	}
	spec, err := ombSpec(files[0], files[1], given)
	if err != nil {
		printOMBErrors(stderr, prefix, files, err)
		return 2
	}
	cmd.Workload, cmd.Spec = rundoc.E2E, spec
	return runSpec(ctx, cmd, stdout, stderr)
}

// ombSpec reads and translates the files into the spec to run, with the
// flags given laid over the translation.
func ombSpec(workloadFile, driverFile string, given map[string]string) (rundoc.Spec, error) {
	wdata, err := readCapped(workloadFile, ombwork.MaxWorkloadBytes)
	if err != nil {
		return rundoc.Spec{}, &rundoc.FieldError{Field: ombwork.FieldWorkload, Msg: err.Error()}
	}
	ddata, err := readCapped(driverFile, ombwork.MaxDriverBytes)
	if err != nil {
		return rundoc.Spec{}, &rundoc.FieldError{Field: ombwork.FieldDriver, Msg: err.Error()}
	}
	w, werr := ombwork.ParseWorkload(wdata)
	d, derr := ombwork.ParseDriver(ddata)
	if err := errors.Join(werr, derr); err != nil {
		var all rundoc.FieldErrors
		for _, e := range []error{werr, derr} {
			if err := all.Append(e); err != nil {
				return rundoc.Spec{}, err
			}
		}
		return rundoc.Spec{}, all
	}
	opts := ombwork.Options{Applies: runner.E2ERateApplies}
	var flagErrs rundoc.FieldErrors
	for _, f := range []struct {
		name string
		dst  **float64
	}{{"duration", &opts.Duration}, {"warmup", &opts.Warmup}} {
		if v, ok := given[f.name]; ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(x) || x < 0 || x > rundoc.MaxDuration {
				flagErrs.Add(f.name, "must be seconds, from 0 to %v, got %q", rundoc.MaxDuration, v)
				continue
			}
			*f.dst = &x
		}
	}
	if w.UseRandomizedPayloads && given["payload"] != "" {
		flagErrs.Add("payload", "the workload's payloads are randomized (useRandomizedPayloads): it reads no payload file")
	}
	if !w.UseRandomizedPayloads && (w.PayloadFile != "" || given["payload"] != "") {
		path := given["payload"]
		if path == "" {
			path = payloadPath(w.PayloadFile, workloadFile)
		}
		if data, err := readCapped(path, rundoc.MaxPayloadBytes); err == nil {
			opts.Payload, opts.PayloadFrom = data, "read from "+path
		} else {
			opts.NoPayload = fmt.Sprintf("%v (give the file with --payload FILE)", err)
		}
	}
	if err := flagErrs.Err(); err != nil {
		return rundoc.Spec{}, err
	}
	tr, err := ombwork.Translate(w, d, opts)
	if err != nil {
		return rundoc.Spec{}, err
	}
	params := tr.Params
	set := func(name, v string) {
		params[name], _ = json.Marshal(v)
	}
	switch {
	case given["embedded"] != "" && given["bootstrap-server"] != "":
		return rundoc.Spec{}, rundoc.NewFieldError("embedded", "give --embedded or --bootstrap-server, not both")
	case given["embedded"] != "":
		// commonConfig's servers are not the target: the embedded broker
		// is, which the runner starts as replicationFactor brokers.
	case given["bootstrap-server"] != "":
		set("bootstrap-server", given["bootstrap-server"])
	case tr.Bootstrap != "":
		set("bootstrap-server", tr.Bootstrap)
	}
	for _, name := range []string{"topic", "profile", "profile-windows", "reporting-interval"} {
		if v, ok := given[name]; ok {
			set(name, v)
			delete(tr.Origin, name)
		}
	}
	spec, err := rundoc.SpecFromParams(rundoc.E2E, params, runner.Validate)
	return spec, tr.Remap(err)
}

// payloadPath is where the workload's payloadFile is read: as OMB reads
// it, from the current directory; else, when that has no such file,
// beside the workload file.
func payloadPath(name, workloadFile string) string {
	if filepath.IsAbs(name) {
		return name
	}
	if _, err := os.Stat(name); err == nil {
		return name
	}
	beside := filepath.Join(filepath.Dir(workloadFile), name)
	if _, err := os.Stat(beside); err == nil {
		return beside
	}
	return name
}

// readCapped reads a file of at most limit bytes.
func readCapped(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s is over %d bytes", path, limit)
	}
	return data, nil
}

// printOMBErrors prints each bad field on a line of its own, a file's
// fields after the file's name.
func printOMBErrors(w io.Writer, prefix string, files []string, err error) {
	var fes rundoc.FieldErrors
	var fe *rundoc.FieldError
	switch {
	case errors.As(err, &fes):
	case errors.As(err, &fe):
		fes = rundoc.FieldErrors{fe}
	default:
		fmt.Fprintf(w, "%s: %v\n", prefix, err)
		return
	}
	for _, e := range fes {
		switch {
		case e.Field == ombwork.FieldWorkload || strings.HasPrefix(e.Field, ombwork.FieldWorkload+"."):
			fmt.Fprintf(w, "%s: %s: %s\n", prefix, files[0], fieldMsg(e, ombwork.FieldWorkload))
		case e.Field == ombwork.FieldDriver || strings.HasPrefix(e.Field, ombwork.FieldDriver+"."):
			fmt.Fprintf(w, "%s: %s: %s\n", prefix, files[1], fieldMsg(e, ombwork.FieldDriver))
		default:
			fmt.Fprintf(w, "%s: %v\n", prefix, e)
		}
	}
}

// fieldMsg is "field: message" for a file's field, the message alone
// for the whole file.
func fieldMsg(e *rundoc.FieldError, file string) string {
	if f := strings.TrimPrefix(e.Field, file+"."); f != e.Field {
		return f + ": " + e.Msg
	}
	return e.Msg
}
