package toolexec

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/rundoc"
)

// minSecretLen is the shortest secret replaced wherever it appears in
// text: a shorter one (a 1-character password) would replace digits of
// every figure. Such a value is still redacted where its key names it.
const minSecretLen = 4

// configFlags name a properties file of the Kafka tools, whose secret
// values are collected so that nothing the tool prints from it is kept:
// given as --flag FILE or --flag=FILE. --command-config is what Kafka 4.2
// (KIP-1147) renamed --producer.config and --consumer.config to.
var configFlags = map[string]bool{
	"--command-config": true, "--producer.config": true, "--consumer.config": true,
	"--config": true, "--command.config": true, "--admin.config": true,
}

// maxConfigFile bounds a properties file read for its secrets.
const maxConfigFile = 1 << 20

// Secrets returns the secret values of a command line and environment:
// values of KEY=VALUE arguments (--producer-props, --command-property,
// -DKEY=VALUE, --password=X) and environment variables whose names are
// secret (rundoc.SecretName: *_PASSWORD, *_PASSWD, API_KEY, KBENCH_TOKEN,
// basic.auth.user.info…), the secret options of JAAS text
// (sasl.jaas.config=…), the same inside environment values holding
// options (JAVA_TOOL_OPTIONS, KAFKA_OPTS), the argument after a
// secret-named flag (--password X), the passwords of URLs anywhere
// (rundoc.URLSecrets: user:pass@, ?password=; DATABASE_URL), and the
// secret values of the properties files named by --command-config,
// --producer.config, --consumer.config (as --flag FILE or --flag=FILE) or
// EndToEndLatency's positional properties_file. Longest first.
func Secrets(argv, env []string) []string {
	var out []string
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	tokens := func(ts []string) {
		for i, t := range ts {
			for _, u := range rundoc.URLSecrets(t) {
				add(u)
			}
			if k, v, ok := tokenProp(t); ok {
				propSecrets(k, v, add)
				if flag, _, _ := strings.Cut(t, "="); configFlags[flag] {
					fileSecrets(v, add)
				}
				continue
			}
			if i+1 < len(ts) && strings.HasPrefix(t, "-") {
				if rundoc.SecretName(t) {
					add(ts[i+1])
				}
				if configFlags[t] {
					fileSecrets(ts[i+1], add)
				}
			}
		}
	}
	tokens(argv)
	if f, ok := e2eConfigFile(argv); ok {
		fileSecrets(f, add)
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		propSecrets(k, v, add)
		tokens(strings.Fields(v))
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return out
}

// e2eConfigFile is the properties file of EndToEndLatency's positional
// arguments (broker_list topic num_messages producer_acks
// message_size_bytes properties_file), when argv runs it with one.
func e2eConfigFile(argv []string) (string, bool) {
	for i, a := range argv {
		if b := strings.ToLower(filepath.Base(a)); strings.Contains(b, "e2e-latency") || strings.Contains(b, "endtoendlatency") {
			if args := argv[i+1:]; len(args) >= 6 && !strings.HasPrefix(args[0], "-") {
				return args[5], true
			}
			return "", false
		}
	}
	return "", false
}

// kbenchSecretVars are kbench's own variables whose values are secrets
// without being named so: a database URL with its password, a webhook URL
// with its secret path (KBENCH_TOKEN's name says it).
var kbenchSecretVars = map[string]bool{"KBENCH_DATABASE": true, "KBENCH_NOTIFY_URL": true}

// ChildEnv returns env without kbench's own secrets, for a command kbench
// starts (kbench exec's, a tool run's Kafka script): KBENCH_TOKEN,
// KBENCH_DATABASE, KBENCH_NOTIFY_URL and any KBENCH_* variable with a
// secret name (rundoc.SecretName). The command has no use for them and
// could print them or pass them on.
func ChildEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "KBENCH_") && (rundoc.SecretName(k) || kbenchSecretVars[k]) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// tokenProp splits an argument KEY=VALUE (leading dashes and -D dropped).
func tokenProp(t string) (key, value string, ok bool) {
	k, v, ok := strings.Cut(t, "=")
	if !ok {
		return "", "", false
	}
	k = strings.TrimLeft(strings.TrimPrefix(k, "-D"), "-")
	return k, v, k != ""
}

// propSecrets adds the secret values of property k=v: the whole value
// under a secret name, the secret options of JAAS text, the passwords of
// URLs in any other value.
func propSecrets(k, v string, add func(string)) {
	if !rundoc.SecretName(k) {
		for _, u := range rundoc.URLSecrets(v) {
			add(u)
		}
		return
	}
	if !strings.HasSuffix(strings.ToLower(k), "sasl.jaas.config") {
		add(v)
		return
	}
	entries, err := rundoc.ParseJAAS(v)
	if err != nil {
		add(v) // redacted whole
		return
	}
	for _, e := range entries {
		for _, o := range e.Options {
			if rundoc.SecretName(o.Name) {
				add(o.Value)
			}
		}
	}
}

// fileSecrets adds the secret values of a properties file, if it reads.
func fileSecrets(path string, add func(string)) {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxConfigFile {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	props, err := rundoc.ParseProperties(string(data))
	if err != nil {
		return
	}
	for k, v := range props {
		propSecrets(k, v, add)
	}
}

// RedactArgs returns argv safe to print and store: KEY=VALUE arguments
// through rundoc.RedactProps (JAAS text keeps its non-secret options), the
// argument after a secret-named flag, every secret of at least four
// characters and the passwords of URLs (rundoc.RedactURLs) replaced with
// rundoc.Redacted.
func RedactArgs(argv, secrets []string) []string {
	repl := replacer(secrets)
	out := make([]string, len(argv))
	for i, t := range argv {
		out[i] = t
		if k, v, ok := tokenProp(t); ok {
			if red := rundoc.RedactProps(map[string]string{k: v})[k]; red != v {
				out[i] = t[:len(t)-len(v)] + red
				continue
			}
		}
		if i > 0 && strings.HasPrefix(argv[i-1], "-") && !strings.Contains(argv[i-1], "=") && rundoc.SecretName(argv[i-1]) {
			out[i] = rundoc.Redacted
			continue
		}
		out[i] = repl.Replace(t)
	}
	return out
}

// RedactText replaces every secret of at least four characters and the
// passwords of URLs (rundoc.RedactURLs) in s.
func RedactText(s string, secrets []string) string { return replacer(secrets).Replace(s) }

// redactor replaces known secrets, then the passwords of URLs.
type redactor struct{ known *strings.Replacer }

// Replace returns s with the secrets replaced.
func (r *redactor) Replace(s string) string { return rundoc.RedactURLs(r.known.Replace(s)) }

// replacer replaces the secrets of at least minSecretLen bytes, longest
// first, and the passwords of URLs (rundoc.RedactURLs), whatever their
// length.
func replacer(secrets []string) *redactor {
	sorted := slices.Clone(secrets)
	slices.SortStableFunc(sorted, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	var pairs []string
	for _, s := range sorted {
		if len(s) >= minSecretLen {
			pairs = append(pairs, s, rundoc.Redacted)
		}
	}
	return &redactor{strings.NewReplacer(pairs...)}
}
