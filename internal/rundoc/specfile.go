package rundoc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
)

// SpecFile is the JSON a spec file holds: the workload and its params keyed
// by flag name, the same shape as the API's request body.
type SpecFile struct {
	Workload Workload                   `json:"workload"`
	Params   map[string]json.RawMessage `json:"params"`
}

// Params returns the spec as params keyed by flag name (the inverse of
// SpecFromParams). It fails only for a spec that cannot be encoded (a NaN
// or infinite number, which no parser of this package lets through).
func (s Spec) Params() (map[string]json.RawMessage, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("rundoc: encode spec: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("rundoc: decode spec: %w", err)
	}
	for k := range m {
		// Keep only what the workload takes, so SpecFromParams accepts it.
		if _, ok := lookupOption(s.Workload, k); !ok && k != "props" && k != "cluster" && k != "tool" && k != "shard" && k != "workers" {
			delete(m, k)
		}
	}
	return m, nil
}

// WriteSpecFile writes a spec file for a child `kbench run --spec`. The
// caller must have removed secrets (SplitSecrets).
func WriteSpecFile(path string, s Spec) error {
	params, err := s.Params()
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(SpecFile{Workload: s.Workload, Params: params}, "", "  ")
	if err != nil {
		return fmt.Errorf("rundoc: encode spec: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("rundoc: write spec: %w", err)
	}
	return nil
}

// ParseSpecFile decodes a spec file strictly: one JSON object with a
// workload and params (an empty object for every default) and nothing
// else. A file that does not say what to run is refused rather than run
// with the defaults.
func ParseSpecFile(data []byte) (SpecFile, error) {
	var f SpecFile
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return f, errors.New("not a spec file: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("not a spec file: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return f, errors.New("not a spec file: data after the object")
	}
	if f.Params == nil {
		return f, &FieldError{Field: "params", Msg: "missing: give an object of flag values ({} for every default)"}
	}
	return f, nil
}

// ReadSpecFile reads a spec file and merges the secret properties found in
// the environment variable SecretPropsEnv (read through getenv).
func ReadSpecFile(path string, getenv func(string) string, checks ...Check) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("--spec: %w", err)
	}
	f, err := ParseSpecFile(data)
	if err != nil {
		return Spec{}, fmt.Errorf("--spec: %s: %w", path, err)
	}
	if raw := getenv(SecretPropsEnv); raw != "" {
		var secrets map[string]string
		if err := json.Unmarshal([]byte(raw), &secrets); err != nil {
			return Spec{}, fmt.Errorf("%s: not a JSON object of strings", SecretPropsEnv)
		}
		props := map[string]string{}
		if raw, ok := f.Params["props"]; ok {
			if err := json.Unmarshal(raw, &props); err != nil {
				return Spec{}, &FieldError{Field: "props", Msg: "must be an object of strings"}
			}
		}
		for k, v := range secrets {
			props[k] = v
		}
		if f.Params["props"], err = json.Marshal(props); err != nil {
			return Spec{}, fmt.Errorf("%s: %w", SecretPropsEnv, err)
		}
	}
	return SpecFromParams(f.Workload, f.Params, checks...)
}

// nonDefining are the spec fields that change how a run reports, not what
// it measures; runs differing only in them are comparable.
var nonDefining = map[string]bool{
	"print-metrics": true, "reporting-interval": true, "profile": true, "show-detailed-stats": true, "notes": true,
}

// Fingerprint identifies the workload a spec defines, so runs of the same
// workload can be found and compared over time. Secrets, reporting options
// and the profiles captured do not take part. The target takes part (it is
// in the params: --bootstrap-server, or bootstrap.servers among the
// properties; neither for the embedded broker), as a set: the same servers
// in another order or spacing are the same target. On a named cluster
// the cluster's name is the target: its servers and connection properties
// (ConnectionProp) do not take part, so a cluster moved to new brokers
// keeps its series, and a result recording them fingerprints as its
// stored spec did. It fails only when Params does.
func (s Spec) Fingerprint() (string, error) {
	r := s.Redacted()
	if r.Cluster != "" {
		r.BootstrapServer = ""
		r.Props = maps.Clone(r.Props)
		maps.DeleteFunc(r.Props, func(k, _ string) bool { return ConnectionProp(k) })
	}
	r.BootstrapServer = normalizeServers(r.BootstrapServer)
	if v, ok := r.Props["bootstrap.servers"]; ok {
		r.Props = maps.Clone(r.Props)
		r.Props["bootstrap.servers"] = normalizeServers(v)
	}
	params, err := r.Params()
	if err != nil {
		return "", err
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		if !nonDefining[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	fmt.Fprintf(h, "workload=%s\n", s.Workload)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, params[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// normalizeServers writes a list of bootstrap servers as a set: sorted,
// without spaces or repeats.
func normalizeServers(v string) string {
	servers := SplitServers(v)
	sort.Strings(servers)
	return strings.Join(slices.Compact(servers), ",")
}
