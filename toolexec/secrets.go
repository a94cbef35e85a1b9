package toolexec

import (
	"cmp"
	"os"
	"slices"
	"strings"

	"github.com/kbench/kbench/rundoc"
)

// minSecretLen is the shortest secret replaced wherever it appears in
// text: a shorter one (a 1-character password) would replace digits of
// every figure. Such a value is still redacted where its key names it.
const minSecretLen = 4

// configFlags name a properties file of the Kafka tools, whose secret
// values are collected so that nothing the tool prints from it is kept.
var configFlags = map[string]bool{
	"--command-config": true, "--producer.config": true, "--consumer.config": true,
	"--config": true, "--command.config": true,
}

// maxConfigFile bounds a properties file read for its secrets.
const maxConfigFile = 1 << 20

// Secrets returns the secret values of a command line and environment:
// values of KEY=VALUE arguments (--producer-props, --command-property,
// -DKEY=VALUE) and environment variables whose key rundoc.RedactProps
// hides, the secret options of JAAS text (sasl.jaas.config=…), the same
// inside environment values holding options (JAVA_TOOL_OPTIONS,
// KAFKA_OPTS), the argument after a secret-named flag (--password X),
// and the secret values of the properties files named by --command-config,
// --producer.config or --consumer.config. Longest first.
func Secrets(argv, env []string) []string {
	var out []string
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	tokens := func(ts []string) {
		for i, t := range ts {
			if k, v, ok := tokenProp(t); ok {
				propSecrets(k, v, add)
				continue
			}
			if i+1 < len(ts) && strings.HasPrefix(t, "-") {
				name := strings.TrimLeft(t, "-")
				if rundoc.RedactProps(map[string]string{name: "x"})[name] == rundoc.Redacted {
					add(ts[i+1])
				}
				if configFlags[t] {
					fileSecrets(ts[i+1], add)
				}
			}
		}
	}
	tokens(argv)
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

// tokenProp splits an argument KEY=VALUE (leading dashes and -D dropped).
func tokenProp(t string) (key, value string, ok bool) {
	k, v, ok := strings.Cut(t, "=")
	if !ok {
		return "", "", false
	}
	k = strings.TrimLeft(strings.TrimPrefix(k, "-D"), "-")
	return k, v, k != ""
}

// propSecrets adds the secret values of property k=v.
func propSecrets(k, v string, add func(string)) {
	red := rundoc.RedactProps(map[string]string{k: v})[k]
	if red == v {
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
			if rundoc.RedactProps(map[string]string{o.Name: o.Value})[o.Name] != o.Value {
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
// argument after a secret-named flag and every secret of at least four
// characters replaced with rundoc.Redacted.
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
		if i > 0 && strings.HasPrefix(argv[i-1], "-") && !strings.Contains(argv[i-1], "=") {
			name := strings.TrimLeft(argv[i-1], "-")
			if rundoc.RedactProps(map[string]string{name: "x"})[name] == rundoc.Redacted {
				out[i] = rundoc.Redacted
				continue
			}
		}
		out[i] = repl.Replace(t)
	}
	return out
}

// RedactText replaces every secret of at least four characters in s.
func RedactText(s string, secrets []string) string { return replacer(secrets).Replace(s) }

// replacer replaces the secrets of at least minSecretLen bytes, longest
// first.
func replacer(secrets []string) *strings.Replacer {
	sorted := slices.Clone(secrets)
	slices.SortStableFunc(sorted, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	var pairs []string
	for _, s := range sorted {
		if len(s) >= minSecretLen {
			pairs = append(pairs, s, rundoc.Redacted)
		}
	}
	return strings.NewReplacer(pairs...)
}
