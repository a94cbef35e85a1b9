package kafkafmt

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The golden files under testdata/e2e were printed by Java (OpenJDK 17),
// not by this package: E2EFormat.java there applies the arithmetic and
// formatting of Kafka's EndToEndLatency tool to the round trips in the
// .nanos files (javac E2EFormat.java && java E2EFormat < run.nanos >
// run.golden; with an argument it prints a progress line for every
// record, as every.golden). So -update does not rewrite them.

func readNanos(t *testing.T, name string) []int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "e2e", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, f := range strings.Fields(string(data)) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func compareJava(t *testing.T, golden, got string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", "e2e", golden))
	if err != nil {
		t.Fatal(err)
	}
	if line, g, w, ok := firstLineDiff(got, string(want)); !ok {
		t.Errorf("%s differs from Java at line %d:\ngot  %q\nwant %q", golden, line, g, w)
	}
}

func firstLineDiff(got, want string) (int, string, string, bool) {
	if got == want {
		return 0, "", "", true
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; ; i++ {
		g, w := "(end)", "(end)"
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return i + 1, g, w, false
		}
	}
}

// TestE2ERunMatchesJava: a run's output (progress every 1000 records,
// the average and the percentiles) is Java's byte for byte.
func TestE2ERunMatchesJava(t *testing.T) {
	nanos := readNanos(t, "run.nanos")
	var b strings.Builder
	for i, e := range nanos {
		if i%E2EProgressEvery == 0 {
			b.WriteString(E2EProgress(int64(i), e))
		}
	}
	b.WriteString(E2ESummary(nanos))
	compareJava(t, "run.golden", b.String())
}

// TestE2EProgressMatchesJava: the progress value is Double.toString of
// elapsed / 1000.0 / 1000.0 for 1,208 round trips from 0 ns to 115 days,
// and the percentiles wrap as Java's (int) cast does.
func TestE2EProgressMatchesJava(t *testing.T) {
	nanos := readNanos(t, "every.nanos")
	var b strings.Builder
	for i, e := range nanos {
		b.WriteString(E2EProgress(int64(i), e))
	}
	b.WriteString(E2ESummary(nanos))
	compareJava(t, "every.golden", b.String())
}

// tenth is a variable: 0.1 + 0.2 between constants would be exactly 0.3.
var tenth = 0.1

func TestJavaDouble(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{0.001, "0.001"},
		{9.99e-4, "9.99E-4"},
		{tenth + 0.2, "0.30000000000000004"},
		{2.0 / 3, "0.6666666666666666"},
		{1e7, "1.0E7"},
		{9999999.5, "9999999.5"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.SmallestNonzeroFloat64, "4.9E-324"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		// Two divisions, as the tool computes it, not one by 1e6.
		{float64(1563954) / 1000.0 / 1000.0, "1.5639539999999998"},
		{float64(1563954) / 1e6, "1.563954"},
	}
	for _, tt := range tests {
		if got := JavaDouble(tt.v); got != tt.want {
			t.Errorf("JavaDouble(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestE2ESmallRuns(t *testing.T) {
	tests := []struct {
		nanos []int64
		want  string
	}{
		{nil, ""},
		{[]int64{1_999_999}, "Avg latency: 2.0000 ms\nPercentiles: 50th = 1, 99th = 1, 99.9th = 1\n"},
		// n = 2: index (int)(2 × 0.5) = 1, the larger.
		{[]int64{5_000_000, 1_000_000}, "Avg latency: 3.0000 ms\nPercentiles: 50th = 5, 99th = 5, 99.9th = 5\n"},
		// Half-up on the shortest decimal: 0.00005 ms rounds to 0.0001.
		{[]int64{50}, "Avg latency: 0.0001 ms\nPercentiles: 50th = 0, 99th = 0, 99.9th = 0\n"},
	}
	for _, tt := range tests {
		if got := E2ESummary(tt.nanos); got != tt.want {
			t.Errorf("E2ESummary(%v) = %q, want %q", tt.nanos, got, tt.want)
		}
	}
	if got, want := E2ETopicCreation("t1", 1, 1), "Topic \"t1\" does not exist. Will create topic with 1 partition(s) and replication factor = 1\n"; got != want {
		t.Errorf("E2ETopicCreation = %q, want %q", got, want)
	}
}

// TestParseOutputJavaE2E imports what Java printed (the golden files
// above) and checks the figures against the round trips themselves,
// computed here: the average to the 4 decimals printed, the percentiles
// as whole ms of the sorted truncated round trips (an int, as Java's).
func TestParseOutputJavaE2E(t *testing.T) {
	for _, tt := range []struct {
		golden, nanos string
		progress      int
	}{
		{"run.golden", "run.nanos", 4},
		{"every.golden", "every.nanos", 1208},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			nanos := readNanos(t, tt.nanos)
			data, err := os.ReadFile(filepath.Join("testdata", "e2e", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			im, err := ParseOutput(strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			if im.Tool != ToolE2E {
				t.Errorf("Tool = %q, want %q", im.Tool, ToolE2E)
			}
			sum := 0.0
			ms := make([]int64, len(nanos))
			for i, e := range nanos {
				sum += float64(e)
				ms[i] = e / 1_000_000
			}
			slices.Sort(ms)
			// Java casts each percentile to int: every.nanos has round
			// trips of days, which wrap, and are imported as printed.
			at := func(q float64) float64 { return float64(int32(ms[int(float64(len(ms))*q)])) }
			avg := sum / float64(len(nanos)) / 1e6
			want := map[string]float64{"e2e-latency-p50": at(0.5), "e2e-latency-p99": at(0.99), "e2e-latency-p999": at(0.999)}
			got := map[string]float64{}
			for _, m := range im.Metrics {
				got[m.Name] = m.Value
				if m.Unit != "ms" || m.Better != "lower" {
					t.Errorf("%s: unit %q, better %q, want ms, lower", m.Name, m.Unit, m.Better)
				}
			}
			if len(got) != 4 {
				t.Errorf("metrics %v, want the average and three percentiles", got)
			}
			if g := got["e2e-latency-avg"]; math.Abs(g-avg) > 0.00005*math.Max(1, avg/1e4) {
				t.Errorf("e2e-latency-avg = %v, want %.4f", g, avg)
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s = %v, want %v", name, got[name], w)
				}
			}
			note := strconv.Itoa(tt.progress) + " progress lines"
			if !slices.ContainsFunc(im.Notes, func(n string) bool { return strings.Contains(n, note) }) {
				t.Errorf("no note with %q: %q", note, im.Notes)
			}
		})
	}
}
