package runner

import (
	"runtime/debug"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kversion"
)

// rangesOf turns franz-go's table of a release into an ApiVersions answer.
func rangesOf(v *kversion.Versions) []kafka.ApiVersion {
	var out []kafka.ApiVersion
	v.EachMaxKeyVersion(func(k, max int16) {
		out = append(out, kafka.ApiVersion{ApiKey: k, MinVersion: 0, MaxVersion: max})
	})
	return out
}

// TestGuessRelease checks the small table of releaseSteps against
// franz-go's independent per-release tables: each Apache Kafka release's
// own ranges must be guessed as at least the newest step not after it.
func TestGuessRelease(t *testing.T) {
	tests := []struct {
		name string
		v    *kversion.Versions
		want string
	}{
		{"0.11", kversion.V0_11_0(), "guess: < 2.1 (from API ranges)"},
		{"2.0", kversion.V2_0_0(), "guess: < 2.1 (from API ranges)"},
		{"2.1", kversion.V2_1_0(), "guess: ≥ 2.1 (from API ranges)"},
		{"2.2", kversion.V2_2_0(), "guess: ≥ 2.1 (from API ranges)"},
		{"2.3", kversion.V2_3_0(), "guess: ≥ 2.3 (from API ranges)"},
		{"2.4", kversion.V2_4_0(), "guess: ≥ 2.4 (from API ranges)"},
		{"2.5", kversion.V2_5_0(), "guess: ≥ 2.4 (from API ranges)"},
		{"2.6", kversion.V2_6_0(), "guess: ≥ 2.4 (from API ranges)"},
		{"2.7", kversion.V2_7_0(), "guess: ≥ 2.7 (from API ranges)"},
		{"2.8", kversion.V2_8_0(), "guess: ≥ 2.8 (from API ranges)"},
		{"3.0", kversion.V3_0_0(), "guess: ≥ 3.0 (from API ranges)"},
		{"3.1", kversion.V3_1_0(), "guess: ≥ 3.1 (from API ranges)"},
		{"3.4", kversion.V3_4_0(), "guess: ≥ 3.1 (from API ranges)"},
		{"3.5", kversion.V3_5_0(), "guess: ≥ 3.5 (from API ranges)"},
		{"3.6", kversion.V3_6_0(), "guess: ≥ 3.5 (from API ranges)"},
		{"3.7", kversion.V3_7_0(), "guess: ≥ 3.7 (from API ranges)"},
		{"3.8", kversion.V3_8_0(), "guess: ≥ 3.8 (from API ranges)"},
		{"3.9", kversion.V3_9_0(), "guess: ≥ 3.9 (from API ranges)"},
		{"4.0", kversion.V4_0_0(), "guess: ≥ 4.0 (from API ranges)"},
		{"4.1", kversion.V4_1_0(), "guess: ≥ 4.1 (from API ranges)"},
		{"4.2", kversion.V4_2_0(), "guess: ≥ 4.1 (from API ranges)"},
	}
	for _, tt := range tests {
		if got := GuessRelease(rangesOf(tt.v)); got != tt.want {
			t.Errorf("Kafka %s: GuessRelease = %q, want %q", tt.name, got, tt.want)
		}
	}
	// A broker lacking Fetch (not a Kafka broker) is not placed above
	// the first step it misses.
	noFetch := []kafka.ApiVersion{{ApiKey: 0, MaxVersion: 13}, {ApiKey: 2, MaxVersion: 10}}
	if got := GuessRelease(noFetch); got != "guess: < 2.1 (from API ranges)" {
		t.Errorf("without Fetch: %q", got)
	}
}

func TestBuildVersions(t *testing.T) {
	tests := []struct {
		name           string
		bi             debug.BuildInfo
		kbench, kafkaG string
	}{
		{"test binary", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel", ""},
		{"go install @v1.2.3", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"},
			Deps: []*debug.Module{{Path: "github.com/segmentio/kafka-go", Version: "v0.4.51"}}}, "v1.2.3", "v0.4.51"},
		{"clean checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}},
			"devel+0123456789ab", ""},
		{"dirty checkout, replaced kafka-go", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"}},
			Deps: []*debug.Module{{Path: "github.com/segmentio/kafka-go", Version: "v0.4.51",
				Replace: &debug.Module{Path: "example.com/fork/kafka-go", Version: "v0.4.52-rc1"}}}},
			"devel+0123456789ab+dirty", "example.com/fork/kafka-go@v0.4.52-rc1"},
	}
	for _, tt := range tests {
		k, kg := buildVersions(&tt.bi)
		if k != tt.kbench || kg != tt.kafkaG {
			t.Errorf("%s: buildVersions = %q, %q; want %q, %q", tt.name, k, kg, tt.kbench, tt.kafkaG)
		}
	}
}
