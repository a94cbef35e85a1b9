package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/kbench/kbench/runner/kafkasec"
)

// SecretPropsEnv names the environment variable through which a parent
// process (kbench serve) hands a run its secret Kafka properties (SASL
// passwords, JAAS lines, key passwords) as a JSON object. Secrets never go
// into the spec file, the database or any log.
const SecretPropsEnv = "KBENCH_SECRET_PROPS"

// SpecFile is the JSON a spec file holds: the workload and its params keyed
// by flag name, the same shape as the API's request body.
type SpecFile struct {
	Workload string                     `json:"workload"`
	Params   map[string]json.RawMessage `json:"params"`
}

// SplitSecrets separates the secret properties of a spec from the rest:
// the returned spec has none of them, and secrets holds their real values.
// A property is secret when kafkasec.Redact would hide it.
func SplitSecrets(s Spec) (public Spec, secrets map[string]string) {
	public = s
	if len(s.Props) == 0 {
		return public, nil
	}
	redacted := kafkasec.Redact(s.Props)
	public.Props = map[string]string{}
	for k, v := range s.Props {
		if redacted[k] != v {
			if secrets == nil {
				secrets = map[string]string{}
			}
			secrets[k] = v
			continue
		}
		public.Props[k] = v
	}
	return public, secrets
}

// Params returns the spec as params keyed by flag name (the inverse of
// SpecFromParams).
func (s Spec) Params() map[string]json.RawMessage {
	data, _ := json.Marshal(s)
	var m map[string]json.RawMessage
	json.Unmarshal(data, &m)
	for k := range m {
		// Keep only what the workload takes, so SpecFromParams accepts it.
		if _, ok := lookupOption(s.Workload, k); !ok && k != "props" {
			delete(m, k)
		}
	}
	return m
}

// WriteSpecFile writes a spec file for a child `kbench run --spec`. The
// caller must have removed secrets (SplitSecrets).
func WriteSpecFile(path string, s Spec) error {
	data, err := json.MarshalIndent(SpecFile{Workload: s.Workload, Params: s.Params()}, "", "  ")
	if err != nil {
		return fmt.Errorf("runner: encode spec: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("runner: write spec: %w", err)
	}
	return nil
}

// ReadSpecFile reads a spec file and merges the secret properties found in
// the environment variable SecretPropsEnv (read through getenv).
func ReadSpecFile(path string, getenv func(string) string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("--spec: %w", err)
	}
	var f SpecFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Spec{}, fmt.Errorf("--spec: %s: %w", path, err)
	}
	if raw := getenv(SecretPropsEnv); raw != "" {
		var secrets map[string]string
		if err := json.Unmarshal([]byte(raw), &secrets); err != nil {
			return Spec{}, fmt.Errorf("%s: not a JSON object of strings", SecretPropsEnv)
		}
		if f.Params == nil {
			f.Params = map[string]json.RawMessage{}
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
		f.Params["props"], _ = json.Marshal(props)
	}
	return SpecFromParams(f.Workload, f.Params)
}

// nonDefining are the spec fields that change how a run reports, not what
// it measures; runs differing only in them are comparable.
var nonDefining = map[string]bool{
	"print-metrics": true, "reporting-interval": true, "profile": true, "show-detailed-stats": true,
}

// Fingerprint identifies the workload a spec defines, so runs of the same
// workload can be found and compared over time. Secrets, reporting options
// and the profiles captured do not take part.
func (s Spec) Fingerprint() string {
	params := s.Redacted().Params()
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
	return hex.EncodeToString(h.Sum(nil))[:16]
}
