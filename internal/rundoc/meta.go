package rundoc

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A run's metadata (Run.Meta, Result.Meta) is free key=value tags saying
// which build of what it measured, so that runs can be put in the order
// the code changed in and a change in a metric can be pinned on a commit.
// Three keys are well known; any other is the user's.
const (
	// MetaCommit is the commit of the code measured (kafka-go's, or the
	// application's).
	MetaCommit = "commit"
	// MetaBranch is the branch the commit is on; it is part of the run's
	// series (SeriesKey), so trunk and a feature branch have histories of
	// their own.
	MetaBranch = "branch"
	// MetaVersion is the version of the code measured. `kbench run` sets
	// it to the kafka-go version it was built with when not given.
	MetaVersion = "version"
)

// Limits of a run's metadata.
const (
	MaxMetaTags  = 32
	MaxMetaKey   = 64
	MaxMetaValue = 256
	// MaxSeriesName is the longest series name an import may give.
	MaxSeriesName = 300
)

// metaKeyRE is what a key may be: short, lower case, one word a URL, a
// shell and a CSV header take unquoted.
var metaKeyRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// ValidateMeta checks a run's metadata: at most MaxMetaTags tags, keys
// like "commit" or "build.id" ([a-z0-9][a-z0-9_.-]*, at most MaxMetaKey
// bytes), values of 1 to MaxMetaValue bytes of UTF-8 text without control
// characters. The error is a FieldErrors on field "meta" naming the first
// bad key (in key order, so the message is the same every time).
func ValidateMeta(m map[string]string) error {
	var errs FieldErrors
	if len(m) > MaxMetaTags {
		errs.Add("meta", "at most %d tags, got %d", MaxMetaTags, len(m))
		return errs
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// Every bad tag, so that one submission shows them all.
	for _, k := range keys {
		if err := checkMetaTag(k, m[k]); err != nil {
			errs.Add("meta", "%s", err)
		}
	}
	return errs.Err()
}

func checkMetaTag(k, v string) error {
	if !metaKeyRE.MatchString(k) {
		return fmt.Errorf("key %q: want lower-case letters, digits, '.', '_' or '-' (starting with a letter or digit), at most %d bytes", k, MaxMetaKey)
	}
	if v == "" {
		return fmt.Errorf("key %q: empty value (leave the tag out instead)", k)
	}
	if len(v) > MaxMetaValue {
		return fmt.Errorf("key %q: value is %d bytes, at most %d", k, len(v), MaxMetaValue)
	}
	if err := checkText(v); err != nil {
		return fmt.Errorf("key %q: value %w", k, err)
	}
	return nil
}

// checkText refuses what is not one line of printable text.
func checkText(v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("is not valid UTF-8")
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return fmt.Errorf("holds a control character (%U)", r)
		}
	}
	return nil
}

// ParseMeta reads key=value pairs (the CLI's repeated --meta, the import
// API's repeated meta fields, the form's lines) into metadata, validated
// as ValidateMeta does. A key given twice is an error: which one was meant
// cannot be guessed. No pairs give nil.
func ParseMeta(pairs []string) (map[string]string, error) {
	var m map[string]string
	// Every bad pair is reported, and the tags that read are validated
	// too: one submission shows every error.
	var errs FieldErrors
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			errs.Add("meta", "%q: want key=value", p)
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		if _, dup := m[k]; dup {
			errs.Add("meta", "key %q given twice", k)
			continue
		}
		m[k] = v
	}
	if err := errs.Append(ValidateMeta(m)); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return m, nil
}

// MetaLines writes metadata as the form shows it: key=value lines in key
// order (the inverse of ParseMetaText).
func MetaLines(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + "\n")
	}
	return b.String()
}

// ParseMetaText reads the form's metadata field: one key=value a line
// (blank lines and spaces around a line ignored).
func ParseMetaText(text string) (map[string]string, error) {
	var pairs []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			pairs = append(pairs, line)
		}
	}
	return ParseMeta(pairs)
}

// WithDefaultMeta returns m with the tags of defaults it lacks added; m is
// not changed. The run's own tags always win.
func WithDefaultMeta(m, defaults map[string]string) map[string]string {
	out := make(map[string]string, len(m)+len(defaults))
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range m {
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// A series is the runs whose metrics form one history: runs of one
// workload (the spec's fingerprint: the fields that define the workload
// and its target, not the label, not secrets) on one branch. The key is a
// readable string: for kbench's own runs the fingerprint, then "@" and the
// branch when there is one ("3f2a9c0d21b7e4a5@trunk"); for imported runs
// of a Kafka tool "imported:TOOL:LABEL", then "@BRANCH". '%' and '@' in a
// label or branch are written %25 and %40, so no two series share a key.
// An import may instead name its series (ValidateSeriesName): the name is
// the key as given, so back-filled results can join any series, including
// one of kbench's own runs.
//
// Migration 0003 gives runs stored before it the same keys (they have no
// branch), in SQL; the two must stay in step.

// SeriesKey is the series of runs with spec fingerprint fingerprint on
// branch ("" for none).
func SeriesKey(fingerprint, branch string) string {
	return withBranch(fingerprint, branch)
}

// ImportSeriesKey is the series of runs imported from tool (the run's
// workload: producer, consumer, or imported for profiles only) under
// label, on branch.
func ImportSeriesKey(tool Workload, label, branch string) string {
	return withBranch("imported:"+string(tool)+":"+escapeSeriesPart(label), branch)
}

func withBranch(key, branch string) string {
	if branch == "" {
		return key
	}
	return key + "@" + escapeSeriesPart(branch)
}

var seriesEscaper = strings.NewReplacer("%", "%25", "@", "%40")

func escapeSeriesPart(s string) string { return seriesEscaper.Replace(s) }

// ValidateSeriesName checks a series an import names: 1 to MaxSeriesName
// bytes of one line of text (a FieldError on field "series").
func ValidateSeriesName(name string) error {
	if name == "" {
		return NewFieldError("series", "is empty")
	}
	if len(name) > MaxSeriesName {
		return NewFieldError("series", "is %d bytes, at most %d", len(name), MaxSeriesName)
	}
	if err := checkText(name); err != nil {
		return NewFieldError("series", "%s", err)
	}
	return nil
}
