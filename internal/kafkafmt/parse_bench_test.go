package kafkafmt

import (
	"strings"
	"testing"
)

// benchLines is how many progress or interval lines the parse benchmarks
// feed: a 10-million-record EndToEndLatency run prints 10,000.
const benchLines = 10_000

// BenchmarkParseOutputE2E parses an EndToEndLatency output of benchLines
// progress lines and its summary; BenchmarkParseOutputProducer, its peer,
// as many producer interval lines and a summary.
func BenchmarkParseOutputE2E(b *testing.B) {
	nanos := make([]int64, benchLines*E2EProgressEvery)
	for i := range nanos {
		nanos[i] = 1_000_000 + int64(i%977)*1_009
	}
	benchParse(b, impE2EText(nanos), ToolE2E)
}

func BenchmarkParseOutputProducer(b *testing.B) {
	var s strings.Builder
	for i := range benchLines {
		s.WriteString(impWindows[i%len(impWindows)].IntervalLine())
	}
	s.WriteString(ProducerSummary(impTotal.Totals(2, 6, 14, 561)))
	benchParse(b, s.String(), ToolProducer)
}

func benchParse(b *testing.B, text, tool string) {
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		im, err := ParseOutput(strings.NewReader(text))
		if err != nil || im.Tool != tool {
			b.Fatalf("%v %v", im, err)
		}
	}
}
