// OpenMessaging Benchmark workloads in a request: the params omb-workload
// and omb-driver hold the files' contents, which expand into the params
// of the e2e run that runs them (package ombwork).

package launch

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/ombwork"
	"github.com/kbench/kbench/internal/rundoc"
)

// The params that hold an OMB workload's and driver's files.
const (
	ParamOMBWorkload = ombwork.FieldWorkload
	ParamOMBDriver   = ombwork.FieldDriver
)

// ombBeside are the params a request may give beside an OMB workload:
// what OMB's files do not say (the topics' prefix, the profiles, the
// reporting), the payload's contents, which a request gives in place of
// a path on the server's disk, and the durations in seconds in place of
// the files' whole minutes. Every other param would change the workload
// the files define: it is changed in the files.
var ombBeside = map[string]bool{"duration": true, "warmup": true, "payload": true, "topic": true, "profile": true, "profile-windows": true,
	"reporting-interval": true, "notes": true}

// HasOMB reports whether params hold an OMB workload or driver.
func HasOMB(params map[string]json.RawMessage) bool {
	_, w := params[ParamOMBWorkload]
	_, d := params[ParamOMBDriver]
	return w || d
}

// expandOMB turns params holding an OMB workload and driver into the
// params of the e2e run that runs them, and the translation, whose Remap
// names the files' fields in errors about its params. Every bad field is
// in errs, named omb-workload.<field>, omb-driver.<field> or after the
// param. The driver's bootstrap.servers is the run's target unless the
// request names one (hasTarget).
func (l *Launcher) expandOMB(params map[string]json.RawMessage, hasTarget bool) (map[string]json.RawMessage, *ombwork.Translation, rundoc.FieldErrors) {
	var errs rundoc.FieldErrors
	text := func(name string, limit int) []byte {
		raw, ok := params[name]
		if !ok {
			errs.Add(name, "is required with %s: the file's contents", otherOMB(name))
			return nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			errs.Add(name, "must be the file's contents as a string")
			return nil
		}
		if len(s) > limit {
			errs.Add(name, "is %d bytes, more than the %d an OMB file may be", len(s), limit)
			return nil
		}
		return []byte(s)
	}
	wdata := text(ParamOMBWorkload, ombwork.MaxWorkloadBytes)
	ddata := text(ParamOMBDriver, ombwork.MaxDriverBytes)
	if l.opts.E2EApplies == nil {
		errs.Add(ParamOMBWorkload, "this server runs no OMB workloads: it was started without the runner's word on Kafka properties")
	}
	opts := ombwork.Options{Applies: l.opts.E2EApplies, PayloadFrom: "the request's payload",
		NoPayload: "a request never names a file on the server: give the file's contents, base64, as the payload parameter"}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch {
		case k == ParamOMBWorkload || k == ParamOMBDriver:
		case !ombBeside[k]:
			errs.Add(k, "comes from the OMB workload or driver (%s, %s): change it in the file; beside them a request gives only %s",
				ParamOMBWorkload, ParamOMBDriver, strings.Join(sortedKeys(ombBeside), ", "))
		case k == "duration" || k == "warmup":
			f, err := seconds(params[k])
			if err != nil {
				errs.Add(k, "%v", err)
				continue
			}
			if k == "duration" {
				opts.Duration = &f
			} else {
				opts.Warmup = &f
			}
		case k == "payload":
			var s string
			if err := json.Unmarshal(params[k], &s); err != nil {
				errs.Add(k, "must be the payload file's contents, base64")
				continue
			}
			data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
			if err != nil {
				data, err = base64.RawStdEncoding.DecodeString(strings.TrimSpace(s))
			}
			if err != nil || len(data) > rundoc.MaxPayloadBytes {
				errs.Add(k, "must be the payload file's contents, base64, at most %d bytes", rundoc.MaxPayloadBytes)
				continue
			}
			opts.Payload = data
		}
	}
	if len(errs) > 0 || wdata == nil || ddata == nil {
		return nil, nil, errs
	}
	w, werr := ombwork.ParseWorkload(wdata)
	d, derr := ombwork.ParseDriver(ddata)
	for _, err := range []error{werr, derr} {
		if err := errs.Append(err); err != nil {
			errs.Add(ParamOMBWorkload, "%v", err)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	if opts.Payload != nil && w.UseRandomizedPayloads {
		errs.Add("payload", "the workload's payloads are randomized (useRandomizedPayloads): it takes no payload")
		return nil, nil, errs
	}
	tr, err := ombwork.Translate(w, d, opts)
	if err != nil {
		if err := errs.Append(err); err != nil {
			errs.Add(ParamOMBWorkload, "%v", err)
		}
		return nil, nil, errs
	}
	out := tr.Params
	for _, k := range []string{"topic", "profile", "profile-windows", "reporting-interval"} {
		if v, ok := params[k]; ok {
			out[k] = v
			delete(tr.Origin, k)
		}
	}
	notes := tr.Notes
	switch {
	case hasTarget && tr.Bootstrap != "":
		notes = append(notes, fmt.Sprintf("target: the request's, in place of commonConfig's bootstrap.servers (%s)", tr.Bootstrap))
	case tr.Bootstrap != "":
		out["bootstrap-server"], _ = json.Marshal(tr.Bootstrap)
	default:
		notes = append(notes, "target: commonConfig gives no bootstrap.servers: kbench's embedded broker, as many brokers as replicationFactor")
	}
	if v, ok := params["notes"]; ok {
		var more []string
		if err := json.Unmarshal(v, &more); err != nil {
			errs.Add("notes", "must be a list of notes")
			return nil, nil, errs
		}
		notes = append(notes, more...)
	}
	out["notes"], _ = json.Marshal(notes)
	return out, tr, errs
}

// otherOMB names the other file's param.
func otherOMB(name string) string {
	if name == ParamOMBWorkload {
		return ParamOMBDriver
	}
	return ParamOMBWorkload
}

// seconds reads a duration in seconds, a JSON number or its text.
func seconds(raw json.RawMessage) (float64, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("must be seconds")
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
			return 0, fmt.Errorf("must be seconds, got %q", x)
		}
	default:
		return 0, fmt.Errorf("must be seconds")
	}
	if math.IsNaN(f) || f < 0 || f > rundoc.MaxDuration {
		return 0, fmt.Errorf("must be seconds, from 0 to %v", rundoc.MaxDuration)
	}
	return f, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
