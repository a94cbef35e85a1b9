package runner

import "github.com/segmentio/kafka-go"

// releaseSteps are Kafka releases that raised the highest version of an
// API a client of kbench's kind sends: a broker whose ApiVersions answer
// reaches every step up to a release is at least that release. The
// versions are those of Kafka's protocol definitions
// (clients/src/main/resources/common/message/{Produce,Fetch,ListOffsets}Request.json
// in apache/kafka, "validVersions" at each release tag); the tests check
// every step against franz-go's per-release tables (pkg/kversion).
//
// The table stays small on purpose: the guess only has to tell a reader
// roughly how old the broker is, and it says "≥", never an exact release,
// since a broker may be newer than this table, patched, or not Apache
// Kafka at all.
var releaseSteps = []struct {
	release string
	key     int16 // 0 Produce, 1 Fetch, 2 ListOffsets
	max     int16
}{
	{"2.1", 1, 10},
	{"2.3", 1, 11},
	{"2.4", 0, 8},
	{"2.7", 1, 12},
	{"2.8", 0, 9},
	{"3.0", 2, 7},
	{"3.1", 1, 13},
	{"3.5", 1, 15},
	{"3.7", 0, 10},
	{"3.8", 0, 11},
	{"3.9", 1, 17},
	{"4.0", 0, 12},
	{"4.1", 0, 13},
}

// GuessRelease reads a Kafka release off a broker's ApiVersions ranges:
// "guess: ≥ 3.7 (from API ranges)" for the newest release of
// releaseSteps whose step, and every earlier one, the ranges reach;
// "guess: < 2.1 (from API ranges)" when not even the first.
func GuessRelease(vs []kafka.ApiVersion) string {
	maxOf := map[int16]int16{}
	for _, v := range vs {
		maxOf[v.ApiKey] = v.MaxVersion
	}
	guess := ""
	for _, s := range releaseSteps {
		m, ok := maxOf[s.key]
		if !ok || m < s.max {
			break
		}
		guess = s.release
	}
	if guess == "" {
		return "guess: < " + releaseSteps[0].release + " (from API ranges)"
	}
	return "guess: ≥ " + guess + " (from API ranges)"
}
