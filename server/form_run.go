// Decoding the new-run form into the API's request, apart from the
// handlers that take it.

package server

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/ui"
)

// requestFromForm maps the form's fields (named after the runner's flags)
// onto an API request, so both paths validate alike. Fields of its own
// that do not parse are returned together (a rundoc.FieldErrors) with the
// request made of the rest.
func requestFromForm(form url.Values) (launch.Request, error) {
	req := launch.Request{Workload: form.Get("workload"), Label: form.Get("label"), Queue: form.Get("queue"), Params: map[string]json.RawMessage{},
		Tool: strings.TrimSpace(form.Get("tool")), FromForm: true}
	var errs rundoc.FieldErrors
	for _, f := range []struct {
		name string
		dst  *int
	}{{"repetitions", &req.Repetitions}, {"warmup_runs", &req.WarmupRuns}, {ui.FieldWorkers, &req.Workers}} {
		if v := strings.TrimSpace(form.Get(f.name)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs.Add(f.name, "%q is not a whole number", v)
				continue
			}
			*f.dst = n
		}
	}
	meta, err := rundoc.ParseMetaText(form.Get("meta"))
	if err := errs.Append(err); err != nil {
		return req, err
	}
	req.Meta = meta
	switch form.Get("target") {
	case "", "embedded":
	case "bootstrap":
		req.Target = &launch.Target{BootstrapServer: form.Get("bootstrap-server"), SecurityProtocol: form.Get("security-protocol"),
			SASLMechanism: form.Get("sasl-mechanism"), SASLUsername: form.Get("sasl-username"), SASLPassword: form.Get("sasl-password")}
		if req.Target.SecurityProtocol == "PLAINTEXT" || req.Target.SecurityProtocol == "SSL" {
			req.Target.SASLMechanism, req.Target.SASLUsername, req.Target.SASLPassword = "", "", ""
		}
	case "cluster":
		req.Target = &launch.Target{Cluster: form.Get("target.cluster")}
		if req.Target.Cluster == "" {
			errs.Add("target.cluster", "choose one of the server's named clusters")
		}
	default:
		errs.Add("target", "must be embedded, bootstrap or cluster")
	}
	// With an OMB workload pasted, the files define the run: an unticked
	// checkbox is no option given.
	omb := req.Workload == string(rundoc.E2E) && (strings.TrimSpace(form.Get(ui.FieldOMBWorkload)) != "" || strings.TrimSpace(form.Get(ui.FieldOMBDriver)) != "")
	for _, f := range rundoc.Flags() {
		if !applies(f, req.Workload) || f.Name == "bootstrap-server" || launch.ServerRefused[f.Name] {
			continue
		}
		vals := form[f.Name]
		var raw any
		switch f.Kind {
		case "bool":
			// The checkbox sends "true"; any other value goes to the
			// runner's parser, which names what it does not understand.
			if len(vals) == 0 && omb {
				continue
			}
			if len(vals) == 0 {
				raw = false
			} else {
				raw = vals[0]
			}
		case "list":
			// The form sends a hidden "none" before the ticked kinds, so
			// nothing ticked arrives as "none" rather than as the default.
			if len(vals) == 0 {
				continue
			}
			raw = vals
		case "props":
			var kvs []string
			for _, v := range vals {
				for _, line := range strings.Split(v, "\n") {
					if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
						kvs = append(kvs, line)
					}
				}
			}
			if len(kvs) == 0 {
				continue
			}
			raw = kvs
		default:
			if len(vals) == 0 || strings.TrimSpace(vals[0]) == "" {
				continue // empty: the default
			}
			raw = strings.TrimSpace(vals[0])
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return req, fmt.Errorf("server: encode form field %s: %w", f.Name, err)
		}
		req.Params[f.Name] = b
	}
	// An OMB workload's files, pasted: the e2e run that runs them.
	if omb {
		for _, name := range []string{ui.FieldOMBWorkload, ui.FieldOMBDriver} {
			if v := form.Get(name); strings.TrimSpace(v) != "" {
				b, err := json.Marshal(v)
				if err != nil {
					return req, fmt.Errorf("server: encode form field %s: %w", name, err)
				}
				req.Params[name] = b
			}
		}
	}
	return req, errs.Err()
}

func applies(f rundoc.Flag, workload string) bool {
	for _, w := range f.Workloads {
		if string(w) == workload {
			return true
		}
	}
	return false
}
