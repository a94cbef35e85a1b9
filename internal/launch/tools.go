// Kafka tools: a run that names one ("tool" in POST /api/runs and the
// new-run form) is executed by the worker's program of that name (serve's
// or worker's --tool NAME=PATH) with an argument template filled from the
// run's fields, instead of by kbench's client. A request names the tool
// only: never a path, never an argument.

package launch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/jobs"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/toolcatalog"
)

// checkTool checks a request's tool against the tools its queue's workers
// offer and settles the workload: the tool's kind decides it (a request
// may leave workload out, or must give that one). It returns the kind, ""
// after an error, which it adds to errs under "tool" or "workload".
func (l *Launcher) checkTool(req *Request, errs *rundoc.FieldErrors) toolcatalog.Kind {
	req.Tool = strings.TrimSpace(req.Tool)
	if !rundoc.ValidToolName(req.Tool) {
		errs.Add("tool", "%q is not a tool's name: letters, digits, '.', '_' or '-', starting with a letter or digit, at most 64 bytes", req.Tool)
		return ""
	}
	if req.Configs != nil {
		errs.Add("tool", "an A/B submission (configs) runs kbench's client; submit each Kafka tool run on its own")
		return ""
	}
	kind, unknown := l.toolKind(req.Tool, req.Queue)
	if unknown != "" {
		errs.Add("tool", "%s", unknown)
		return ""
	}
	if kind == "" {
		// No worker of the queue is live to say what the tool is: the
		// workload says, and the worker that takes the run checks it.
		kind = toolcatalog.KindOfWorkload(rundoc.Workload(req.Workload))
		if kind == "" {
			errs.Add("workload", "no worker of queue %s is live to say what tool %s is: give its workload, %s", QueueOrDefault(req.Queue), req.Tool, toolWorkloads())
			return ""
		}
	}
	switch want := string(kind.Workload()); {
	case req.Workload == "":
		req.Workload = want
	case req.Workload != want:
		errs.Add("workload", "tool %s is Kafka's %s, for %s runs, got %q", req.Tool, kind.Script(), want, req.Workload)
		return ""
	}
	return kind
}

// toolWorkloads lists the workloads Kafka tools run, for messages.
func toolWorkloads() string {
	var ws []string
	for _, k := range toolcatalog.Kinds() {
		if w := string(k.Workload()); !slices.Contains(ws, w) {
			ws = append(ws, w) // the share consumer's runs are consumer runs
		}
	}
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
}

// checkToolRun adds the errors of a tool run's params and target: only
// the fields the kind's template fills, and a cluster to run against.
func checkToolRun(kind toolcatalog.Kind, req *Request, errs *rundoc.FieldErrors) {
	given := make([]string, 0, len(req.Params))
	for k := range req.Params {
		if k != "tool" && k != "cluster" { // refused by prepareConfig, saying how to give them
			given = append(given, k)
		}
	}
	toolcatalog.CheckSpec(kind, req.Tool, given, errs)
	if req.Target == nil {
		errs.Add("target", "Kafka's %s runs against a cluster: give target.bootstrap_server or target.cluster (the embedded broker lives inside kbench run)", kind.Script())
	}
}

// toolSpec makes spec a run of the tool: the name, and none of kbench's
// profiles (a tool's child captures none).
func toolSpec(spec *rundoc.Spec, tool string) {
	spec.Tool = tool
	spec.Profiles = []string{}
}

// toolKind is the kind of tool name on queue, or why the queue's workers
// do not offer it: on the server's own queue, the server's --tool; on
// another, what its live workers registered. While no worker of that
// queue is live the kind is "" and so is the message.
func (l *Launcher) toolKind(name, queue string) (kind toolcatalog.Kind, unknown string) {
	if QueueOrDefault(queue) == jobs.DefaultQueue && !l.opts.NoLocalWorker {
		if t, ok := l.opts.Tools.Get(name); ok {
			return t.Kind, ""
		}
		return "", toolcatalog.UnknownMessage(name, l.opts.Tools.Names())
	}
	offered, live := l.queueTools(queue)
	if !live {
		return "", ""
	}
	if k, ok := offered[name]; ok {
		return k, ""
	}
	names := make([]string, 0, len(offered))
	for n := range offered {
		names = append(names, n)
	}
	slices.Sort(names)
	return "", fmt.Sprintf("the workers of queue %s: %s", QueueOrDefault(queue), toolcatalog.UnknownMessage(name, names))
}

// queueTools are the tools the live workers of queue offer, by name, and
// whether any worker of it is live (queueWorkers).
func (l *Launcher) queueTools(queue string) (map[string]toolcatalog.Kind, bool) {
	workers, live := l.queueWorkers(queue)
	offered := map[string]toolcatalog.Kind{}
	for _, w := range workers {
		for n, k := range toolcatalog.ParseOffered(w.Tools) {
			offered[n] = k
		}
	}
	return offered, live
}

// toolParams keeps of a form's params those tool kind's template fills:
// the form shows every field of the workload, and sends them all.
func toolParams(kind toolcatalog.Kind, params map[string]json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range params {
		if kind.Takes(k) {
			out[k] = v
		}
	}
	return out
}
