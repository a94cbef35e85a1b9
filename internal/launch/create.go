// Single runs and their repetitions (POST /api/runs without configs, the
// new-run form), and the checks that turn a request into a spec the
// runner will accept, which every other submission shares.

package launch

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/ombwork"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// Request is a submission of runs: the body of POST /api/runs, which the
// new-run form is turned into too.
type Request struct {
	Workload    string                     `json:"workload"`
	Label       string                     `json:"label"`
	Repetitions int                        `json:"repetitions"`
	WarmupRuns  int                        `json:"warmup_runs"`
	Params      map[string]json.RawMessage `json:"params"`
	Target      *Target                    `json:"target,omitempty"`
	// Queue is the queue of workers the runs wait in: "local" (the
	// server's own worker) when empty; see checkQueue.
	Queue string `json:"queue,omitempty"`
	// Meta tags every run of the request (rundoc.ValidateMeta): commit,
	// branch, version or any key; an A/B submission's configurations
	// share it.
	Meta map[string]string `json:"meta,omitempty"`
	// Configs makes an A/B submission (see abtest.go): several
	// configurations queued interleaved. Label, Params and Target are
	// then each configuration's own.
	Configs []Config `json:"configs,omitempty"`
	// Tool names a Kafka tool the queue's workers offer (--tool
	// NAME=PATH) to run instead of kbench's client (tools.go); the
	// workload may then be left out: the tool's kind says it.
	Tool string `json:"tool,omitempty"`
	// Workers makes each run a fleet run (fleet.go): its load divided
	// among that many workers of the queue, 2 to rundoc.MaxFleetWorkers;
	// 0 and 1 are a run of one process. BarrierTimeoutS bounds how long
	// the fleet's first shard to check in waits for the last (default
	// DefaultBarrierTimeoutS).
	Workers         int     `json:"workers,omitempty"`
	BarrierTimeoutS float64 `json:"barrier_timeout_s,omitempty"`
	// FromForm marks a request the new-run form made: it sends every
	// field of the workload, of which a tool run keeps those its
	// template fills. It is never read from JSON.
	FromForm bool `json:"-"`
}

// Target names a real cluster; the password never leaves memory.
// Cluster instead names one of the server's named clusters (--cluster),
// whose properties stay in the server's file.
type Target = wire.Target

// Prepare validates a request for one configuration (not an A/B
// submission) into a spec. It reports every bad field (a
// rundoc.FieldErrors), in the form's order: the run's fields, the
// target's, then the workload options. It settles req's label, counts
// and queue as CreateRuns takes them.
func (l *Launcher) Prepare(req *Request) (rundoc.Spec, error) {
	req.Label = strings.TrimSpace(req.Label)
	var errs rundoc.FieldErrors
	var kind toolcatalog.Kind
	if req.Tool != "" {
		if kind = l.checkTool(req, &errs); kind == "" {
			return rundoc.Spec{}, errs
		}
		if req.FromForm {
			req.Params = toolParams(kind, req.Params)
		}
		checkToolRun(kind, req, &errs)
	}
	if HasOMB(req.Params) {
		// An OMB workload runs as the e2e workload, which a request need
		// not name.
		switch req.Workload {
		case "":
			req.Workload = string(rundoc.E2E)
		case string(rundoc.E2E):
		default:
			errs.Add("workload", "an OMB workload (%s) runs as the e2e workload, got %q", ParamOMBWorkload, req.Workload)
		}
	}
	workloadOK := checkWorkload(req.Workload, &errs)
	if len(req.Label) > rundoc.MaxLabel {
		errs.Add("label", "must be at most %d characters", rundoc.MaxLabel)
	}
	checkCounts(req, &errs)
	if err := errs.Append(rundoc.ValidateMeta(req.Meta)); err != nil {
		return rundoc.Spec{}, err
	}
	if !workloadOK {
		return rundoc.Spec{}, errs
	}
	tool := ""
	if kind != "" {
		tool = req.Tool
	}
	spec, target, opts, err := l.prepareConfig(req.Workload, req.Params, req.Target, req.Queue, tool)
	if err != nil {
		return spec, err
	}
	for _, fe := range target {
		if fe.Field == "cluster" {
			fe.Field = "target.cluster" // the API's name; the form's select has it too
		}
	}
	if kind != "" {
		toolSpec(&spec, req.Tool)
	}
	l.checkQueue(req, []rundoc.Spec{spec}, &errs)
	errs = append(append(errs, target...), opts...)
	if len(errs) == 0 {
		l.checkFleet(req, &spec, &errs)
	}
	return spec, errs.Err()
}

// checkWorkload reports whether workload is one kbench runs, adding an
// error to errs when it is not.
func checkWorkload(workload string, errs *rundoc.FieldErrors) bool {
	if rundoc.Workload(workload).Runnable() {
		return true
	}
	errs.Add("workload", "must be producer, consumer, writepath or e2e, got %q", workload)
	return false
}

// checkCounts checks a request's repetitions and warm-up runs; 0
// repetitions means one.
func checkCounts(req *Request, errs *rundoc.FieldErrors) {
	if req.Repetitions < 0 || req.Repetitions > MaxRepetitions {
		errs.Add("repetitions", "must be between 1 and %d, got %d", MaxRepetitions, req.Repetitions)
	}
	if req.WarmupRuns < 0 || req.WarmupRuns > maxWarmupRuns {
		errs.Add("warmup_runs", "must be between 0 and %d, got %d", maxWarmupRuns, req.WarmupRuns)
	}
	if req.Repetitions == 0 {
		req.Repetitions = 1
	}
}

// prepareConfig validates one configuration of a workload (its params and
// target) into a spec. Errors are returned by where they point: target
// holds those of the target's fields (under their form names, e.g.
// "bootstrap-server", also when the address came from the params), opts
// those of the workload options, sorted as the option table lists them;
// err is an error that is not the input's.
//
// tool is the request's tool, "" for kbench's own client: the spec is
// validated as a run of it, whose properties go to Java's client.
func (l *Launcher) prepareConfig(workload string, reqParams map[string]json.RawMessage, t *Target, queue, tool string) (spec rundoc.Spec, target, opts rundoc.FieldErrors, err error) {
	// An OMB workload and driver expand into the e2e run's params; an
	// error about one of those names the files' field it came from.
	var omb *ombwork.Translation
	if HasOMB(reqParams) {
		if tool != "" {
			opts.Add(ParamOMBWorkload, "runs with kbench's clients, not a Kafka tool")
			return spec, nil, opts, nil
		}
		expanded, tr, errs := l.expandOMB(reqParams, t != nil)
		if len(errs) > 0 {
			return spec, nil, errs, nil
		}
		reqParams, omb = expanded, tr
		defer func() {
			if omb != nil {
				target, opts = remapAll(omb, target), remapAll(omb, opts)
			}
		}()
	}
	params := make(map[string]json.RawMessage, len(reqParams))
	for k, v := range reqParams {
		if k == "cluster" {
			// Only through target.cluster, which is checked.
			opts.Add(k, "is not a parameter: name a cluster with \"target\": {\"cluster\": NAME}")
			continue
		}
		if k == "workers" || k == "shard" {
			// A fleet is asked for beside the params, and divided here.
			opts.Add(k, "is not a parameter: ask for a fleet run with \"workers\": N beside \"params\"")
			continue
		}
		if k == "tool" {
			// Only through the request's tool, which is checked.
			opts.Add(k, "is not a parameter: name a tool with \"tool\": NAME beside \"params\"")
			continue
		}
		if ServerRefused[k] {
			opts.Add(k, "is not accepted by the server: it names a file on the server's disk")
			continue
		}
		params[k] = v
	}
	if tool != "" {
		params["tool"] = json.RawMessage(strconv.Quote(tool))
	}
	spec, err = rundoc.SpecFromParams(rundoc.Workload(workload), params, l.opts.Validate)
	if err := opts.Append(err); err != nil {
		return spec, nil, nil, err
	}
	if t != nil && t.Cluster != "" {
		l.applyCluster(&spec, t, queue, &target, &opts)
	} else if t != nil {
		if err := applyTarget(&spec, t, l.opts.Validate, &target, &opts); err != nil {
			return spec, nil, nil, err
		}
	}
	l.checkRequestProps(spec, tool, &opts)
	if !target.Has("bootstrap-server") && !opts.Has("bootstrap-server") {
		if fe := l.targetRefusal(spec.Targets()); fe != nil {
			target.Add(fe.Field, "%s", fe.Msg)
		}
	}
	opts.SortByOptions()
	return spec, target, opts, nil
}

// remapAll names the OMB files' fields in errs about the translation's
// params.
func remapAll(tr *ombwork.Translation, errs rundoc.FieldErrors) rundoc.FieldErrors {
	if len(errs) == 0 {
		return errs
	}
	var out rundoc.FieldErrors
	if err := out.Append(tr.Remap(errs)); err != nil {
		return errs // Remap keeps field errors field errors
	}
	return out
}

// checkRequestProps adds the error of the first Kafka property a
// request may not give, under the workload's props field. The contract
// (rundoc.Spec.Validate) has checked every name and value as text; here
// is what a request, unlike a command line on one's own machine, may
// not ask for:
//   - bootstrap.servers: the target is the request's target, which
//     --allow-target judges;
//   - a whole configuration file (producer.config, …): properties no
//     check has seen;
//   - a file (ssl.*.location), on a server without --token unless
//     --allow-client-files: it is a file on the machine that runs the
//     client, read there by the run, never by the server; the message
//     is the same whatever the path, which nothing here opens;
//   - on a Kafka tool's run, the properties that make the Java client
//     load classes or run a command, unless --allow-tool-class-props.
func (l *Launcher) checkRequestProps(spec rundoc.Spec, tool string, opts *rundoc.FieldErrors) {
	field := rundoc.PropsFlag(spec.Workload)
	if opts.Has(field) {
		return
	}
	keys := make([]string, 0, len(spec.Props))
	for k := range spec.Props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch {
		case strings.EqualFold(k, "bootstrap.servers"):
			opts.Add(field, "%s is never taken from a request's properties: give the target (target.bootstrap_server, the bootstrap-server field, or a named cluster)", k)
		case rundoc.ConfigFileProp(k):
			opts.Add(field, "%s names a configuration file, which a request never gives: give each property, or name a cluster (target.cluster)", k)
		case rundoc.FileProp(k) && !l.opts.TokenRequired && !l.opts.AllowClientFiles:
			opts.Add(field, "%s names a file on the machine that runs the client: this server has no --token and takes none unless started with --allow-client-files; name a cluster whose file gives it (target.cluster, serve's --cluster)", k)
		case rundoc.FileProp(k) && !filepath.IsAbs(spec.Props[k]):
			opts.Add(field, "%s must be an absolute path, on the machine that runs the client", k)
		case tool != "" && rundoc.ClassProp(k) && !l.opts.AllowToolClassProps:
			opts.Add(field, "%s makes the Java client load a class or run a command: a Kafka tool's run takes it only from a server started with --allow-tool-class-props", k)
		default:
			continue
		}
		return
	}
}

// targetField is the target field a message about the client's security
// properties points at, "" for none: what it says is needed ("… needs
// sasl.mechanism"), else the first property it names.
func targetField(msg string) string {
	if _, after, ok := strings.Cut(msg, " needs "); ok {
		if f := firstTargetProp(after); f != "" {
			return f
		}
	}
	return firstTargetProp(msg)
}

func firstTargetProp(text string) string {
	best, field := len(text), ""
	for _, tp := range targetProps {
		if i := strings.Index(text, tp.prop); i >= 0 && i < best {
			best, field = i, tp.field
		}
	}
	return field
}

// applyTarget moves the target fields into the spec as the Kafka
// properties they stand for, then validates again: errors about those
// properties go to target under the field the user filled in, the rest to
// opts (which already holds the first validation's). validate is the
// Kafka client's check (Options.Validate).
func applyTarget(spec *rundoc.Spec, t *Target, validate rundoc.Check, target, opts *rundoc.FieldErrors) error {
	if strings.TrimSpace(t.BootstrapServer) == "" {
		target.Add("bootstrap-server", "is required for a bootstrap target")
	}
	spec.BootstrapServer = strings.TrimSpace(t.BootstrapServer)
	set := func(k, v string) {
		if v == "" {
			return
		}
		if spec.Props == nil {
			spec.Props = map[string]string{}
		}
		spec.Props[k] = v
	}
	set("security.protocol", t.SecurityProtocol)
	set("sasl.mechanism", t.SASLMechanism)
	set("sasl.username", t.SASLUsername)
	set("sasl.password", t.SASLPassword)
	var again rundoc.FieldErrors
	if err := again.Append(spec.Validate(validate)); err != nil {
		return err
	}
	// The first validation judged the security properties without the
	// target's (ssl.* in the params of an SSL target were "set but
	// PLAINTEXT"): this one's verdict on them replaces its.
	first := *opts
	*opts = nil
	for _, fe := range first {
		if !strings.HasSuffix(fe.Field, "-props") || !strings.HasPrefix(fe.Msg, "kafkasec: ") {
			*opts = append(*opts, fe)
		}
	}
	for _, fe := range again {
		if slices.ContainsFunc(*opts, func(o *rundoc.FieldError) bool { return *o == *fe }) {
			// The first validation's, without the target's fields: not
			// about them (an unsupported property's message lists
			// supported ones, target properties among them).
			continue
		}
		field := ""
		if strings.HasSuffix(fe.Field, "-props") {
			// Point at the target field the user filled in.
			field = targetField(fe.Msg)
		}
		if field != "" {
			target.Add(field, "%s", strings.TrimPrefix(fe.Msg, "kafkasec: "))
		} else if fe.Field != "bootstrap-server" || !target.Has("bootstrap-server") {
			opts.Add(fe.Field, "%s", fe.Msg)
		}
	}
	return nil
}

// applyCluster makes spec target the named cluster t.Cluster. The
// cluster's file says where it is and how to log in, so the request may
// give neither: not the target's other fields, nor a bootstrap server or
// connection property (rundoc.ConnectionProp) in its params, which would
// send the cluster's credentials elsewhere. The spec records the name
// only; the lifecycle reads the file when the run starts.
func (l *Launcher) applyCluster(spec *rundoc.Spec, t *Target, queue string, target, opts *rundoc.FieldErrors) {
	var others []string
	for _, f := range []struct{ name, v string }{{"bootstrap_server", t.BootstrapServer}, {"security_protocol", t.SecurityProtocol},
		{"sasl_mechanism", t.SASLMechanism}, {"sasl_username", t.SASLUsername}, {"sasl_password", t.SASLPassword}} {
		if f.v != "" {
			others = append(others, f.name)
		}
	}
	unnamed := ""
	if len(others) == 0 {
		unnamed = l.unnamedCluster(t.Cluster, queue)
	}
	switch {
	case len(others) > 0:
		target.Add("cluster", "a named cluster's file says where it is and how to log in: give the cluster or %s, not both", strings.Join(others, ", "))
	case unnamed != "":
		target.Add("cluster", "%s", unnamed)
	case spec.Workload == rundoc.Writepath:
		target.Add("cluster", "the write path takes no Kafka properties, so it cannot log in to a named cluster; target its bootstrap servers instead")
	}
	if spec.BootstrapServer != "" && !opts.Has("bootstrap-server") {
		opts.Add("bootstrap-server", "comes from the named cluster's file (target.cluster); leave it out")
	}
	var conn []string
	for k := range spec.Props {
		if rundoc.ConnectionProp(k) {
			conn = append(conn, k)
		}
	}
	if field := rundoc.PropsFlag(spec.Workload); len(conn) > 0 && !opts.Has(field) {
		slices.Sort(conn)
		opts.Add(field, "%s: the named cluster's file (target.cluster) says where it is and how to log in; leave them out", strings.Join(conn, ", "))
	}
	if !target.Has("cluster") {
		spec.Cluster = t.Cluster
	}
}

// CreateRuns stores the runs of a request Prepare made spec of (warm-up
// runs first, then the measured repetitions) and queues them. More runs
// than one request may queue are a field error on "repetitions", more
// than the queues may hold ErrQueueFull.
func (l *Launcher) CreateRuns(ctx context.Context, req Request, spec rundoc.Spec) ([]*store.Run, error) {
	if spec.Workers > 1 {
		return l.createFleets(ctx, req, spec)
	}
	_, secrets := rundoc.SplitSecrets(spec)
	specJSON, fingerprint, err := EncodeSpec(spec)
	if err != nil {
		return nil, err
	}
	total := req.WarmupRuns + req.Repetitions
	if err := l.admitRuns(ctx, "repetitions", total, fmt.Sprintf("%d repetitions + %d warm-up runs make %d runs", req.Repetitions, req.WarmupRuns, total)); err != nil {
		return nil, err
	}
	group := ""
	if total > 1 {
		group = randomID(8)
	}
	runs := make([]*store.Run, 0, total)
	for i := 0; i < total; i++ {
		r := &store.Run{Label: req.Label, Workload: spec.Workload, Status: rundoc.StatusQueued, Source: rundoc.SourceLaunched,
			Spec: specJSON, Fingerprint: fingerprint, GroupID: group, Meta: req.Meta, Queue: req.Queue}
		if i < req.WarmupRuns {
			r.Warmup = true
		} else if group != "" {
			r.GroupIndex = i - req.WarmupRuns + 1
		}
		runs = append(runs, r)
	}
	if err := l.store.CreateRuns(ctx, runs); err != nil {
		return nil, err
	}
	for _, r := range runs {
		if err := l.runs.Submit(ctx, r.ID, secrets); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// EncodeSpec is what the store keeps of a spec: its redacted spec file
// and its fingerprint. An error here is a bug (validation lets no
// unencodable value through), never a reason to store less.
func EncodeSpec(spec rundoc.Spec) (specJSON, fingerprint string, err error) {
	params, err := spec.Redacted().Params()
	if err != nil {
		return "", "", fmt.Errorf("launch: encode spec: %w", err)
	}
	data, err := json.Marshal(rundoc.SpecFile{Workload: spec.Workload, Params: params})
	if err != nil {
		return "", "", fmt.Errorf("launch: encode spec: %w", err)
	}
	fingerprint, err = spec.Fingerprint()
	if err != nil {
		return "", "", fmt.Errorf("launch: fingerprint spec: %w", err)
	}
	return string(data), fingerprint, nil
}

// Limits of a request: repetitions of one configuration, warm-up runs,
// and the runs one comparison holds (which an A/B submission and added
// repetitions make). A label's is rundoc.MaxLabel.
const (
	MaxRepetitions = 50
	maxWarmupRuns  = 10
	MaxCompareRuns = 50
)

// ServerRefused are runner flags that name files on the server's disk: a
// request never gives them.
var ServerRefused = map[string]bool{"payload-file": true, "payload-delimiter": true, "producer.config": true, "consumer.config": true}

// targetProps are the Kafka properties the target's form fields stand for.
var targetProps = []struct{ prop, field string }{{"security.protocol", "security-protocol"},
	{"sasl.mechanism", "sasl-mechanism"}, {"sasl.username", "sasl-username"}, {"sasl.password", "sasl-password"}}
