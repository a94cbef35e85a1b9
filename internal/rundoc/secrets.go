package rundoc

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Redacted is what secrets are replaced with in anything written: stored
// specs, result.json, logs and pages.
const Redacted = "[redacted]"

// SecretPropsEnv names the environment variable through which a parent
// process (kbench serve) hands a run its secret Kafka properties (SASL
// passwords, JAAS lines, key passwords) as a JSON object. Secrets never go
// into the spec file, the database or any log.
const SecretPropsEnv = "KBENCH_SECRET_PROPS"

// propSASLJAASConfig is the property whose JAAS text holds a login's
// credentials among other options.
const propSASLJAASConfig = "sasl.jaas.config"

// RedactProps returns a copy of props that is safe to print, log or
// store. Values of properties whose names are secret (SecretName:
// sasl.password, ssl.key.password, ssl.keystore.key, basic.auth.user.info
// and so on) become "[redacted]"; empty values stay empty; in other
// values, the secrets of URLs (RedactURLs: a userinfo password, a
// ?password= parameter) are replaced. In sasl.jaas.config (and any key ending in it, such as
// listener-prefixed ones) only secret option values are replaced, e.g.
// password="[redacted]", keeping the rest readable; JAAS text that does
// not parse is redacted whole.
func RedactProps(props map[string]string) map[string]string {
	if props == nil {
		return nil
	}
	out := make(map[string]string, len(props))
	for k, v := range props {
		switch lk := strings.ToLower(k); {
		case v == "":
			out[k] = v
		case strings.HasSuffix(lk, propSASLJAASConfig):
			out[k] = redactJAAS(v)
		case SecretName(k):
			out[k] = Redacted
		default:
			out[k] = RedactURLs(v)
		}
	}
	return out
}

// Redacted returns a copy of the spec that is safe to write anywhere:
// passwords and keys in its properties are replaced (RedactProps).
func (s Spec) Redacted() Spec {
	if s.Props != nil {
		s.Props = RedactProps(s.Props)
	}
	s.Profiles = append([]string{}, s.Profiles...) // never null in JSON
	return s
}

// SplitSecrets separates the secret properties of a spec from the rest:
// the returned spec has none of them, and secrets holds their real values.
// A property is secret when RedactProps would hide it.
func SplitSecrets(s Spec) (public Spec, secrets map[string]string) {
	public = s
	if len(s.Props) == 0 {
		return public, nil
	}
	redacted := RedactProps(s.Props)
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

// SecurityProtocols lists the security.protocol values a spec's target
// may use, in the order the form offers them. internal/kafkasec implements
// exactly these (its tests hold the two lists together).
func SecurityProtocols() []string { return []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"} }

// SASLMechanisms lists the sasl.mechanism values a spec's target may use
// (kafka-go's: no GSSAPI, no OAUTHBEARER). internal/kafkasec implements
// exactly these.
func SASLMechanisms() []string { return []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} }

// ConnectionProp reports whether Kafka client property k says how to
// reach and log in to a cluster (bootstrap.servers, security.protocol,
// sasl.*, ssl.*) rather than how the workload runs: what a named
// cluster's properties file holds (serve's --cluster), which a run on a
// named cluster may not set, and which does not define the run's series
// there (Fingerprint), since it belongs to the cluster's name.
func ConnectionProp(k string) bool {
	k = strings.ToLower(strings.TrimSpace(k))
	return k == "bootstrap.servers" || k == "security.protocol" || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
}

// clusterNameRE is what a named cluster's name may be: one word a URL, a
// shell and a form take unquoted.
var clusterNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidClusterName reports whether name may name a cluster (serve's
// --cluster NAME=FILE): letters, digits, '.', '_' and '-', starting with
// a letter or digit, at most 64 bytes.
func ValidClusterName(name string) bool { return clusterNameRE.MatchString(name) }

// ValidToolName reports whether name may name a Kafka tool (serve's and
// worker's --tool NAME=PATH): the same words as a cluster's name.
func ValidToolName(name string) bool { return clusterNameRE.MatchString(name) }

// toolParam reads the "tool" param of a spec, adding an error to errs
// when it is not a valid name.
func toolParam(raw json.RawMessage, errs *FieldErrors) string {
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		errs.Add("tool", "want the name of a tool as a string")
		return ""
	}
	if !ValidToolName(name) {
		errs.Add("tool", "%q is not a tool's name: letters, digits, '.', '_' or '-', starting with a letter or digit, at most 64 bytes", name)
		return ""
	}
	return name
}

// clusterParam reads the "cluster" param of a spec, adding an error to
// errs when it is not a valid name.
func clusterParam(raw json.RawMessage, errs *FieldErrors) string {
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		errs.Add("cluster", "want the name of a cluster as a string")
		return ""
	}
	if !ValidClusterName(name) {
		errs.Add("cluster", "%q is not a cluster's name: letters, digits, '.', '_' or '-', starting with a letter or digit, at most 64 bytes", name)
		return ""
	}
	return name
}
