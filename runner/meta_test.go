package runner

import (
	"maps"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestResultMeta: a run records the caller's tags, and version defaults to
// the kafka-go version of the build.
func TestResultMeta(t *testing.T) {
	env := rundoc.Environment{KafkaGoVersion: "v0.4.49", GoVersion: "go1.26.8"}
	for _, tc := range []struct {
		name string
		meta map[string]string
		env  rundoc.Environment
		want map[string]string
	}{
		{"no tags", nil, env, map[string]string{"version": "v0.4.49"}},
		{"tags", map[string]string{"commit": "abc"}, env, map[string]string{"commit": "abc", "version": "v0.4.49"}},
		{"own version", map[string]string{"version": "mine"}, env, map[string]string{"version": "mine"}},
		{"a replaced kafka-go", nil, rundoc.Environment{KafkaGoVersion: "github.com/me/kafka-go@v0.0.0-20250101-abcdef"},
			map[string]string{"version": "github.com/me/kafka-go@v0.0.0-20250101-abcdef"}},
		{"no build info", nil, rundoc.Environment{}, nil},
		{"a version too long for a tag", nil, rundoc.Environment{KafkaGoVersion: strings.Repeat("v", 300)}, nil},
	} {
		if got := resultMeta(tc.meta, tc.env); !maps.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// This binary's own build info names kafka-go.
	if v := CurrentEnvironment().KafkaGoVersion; v != "" {
		if got := resultMeta(nil, CurrentEnvironment())["version"]; got != v {
			t.Errorf("version %q, want the build's kafka-go %q", got, v)
		}
	}
}
