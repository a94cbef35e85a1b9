package numfmt

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/golden"
)

// TestJSCases writes testdata/js_cases.json: inputs and what this package
// makes of them, for the functions static/format.js offers the pages'
// scripts. The end-to-end test TestE2EFormatMatchesGo (package acceptance) runs
// every case through format.js in Chromium, so the two formatters cannot
// drift apart: change a rule here, run go test -update, and that test
// fails until format.js follows.
func TestJSCases(t *testing.T) {
	golden.Check(t, "js_cases.json", jsCasesFile())
}

// jsCasesFile is the content of testdata/js_cases.json: an object with one
// array per format.js function (named as there), each case an array of
// the arguments followed by the expected string. Numbers that JSON cannot
// hold are strings: "NaN", "Infinity", "-Infinity".
func jsCasesFile() string {
	nums := caseNumbers()
	units := []string{"nanoseconds", "ns", "microseconds", "us", "milliseconds", "ms", "seconds", "s",
		"bytes", "B", "count", "", "widgets"}

	var b strings.Builder
	b.WriteString("{\n")
	section := func(name string, first bool, cases [][]any) {
		if !first {
			b.WriteString(",\n")
		}
		b.WriteString(strconv.Quote(name) + ": [\n")
		for i, c := range cases {
			line, err := json.Marshal(c)
			if err != nil {
				panic(err) // only numbers and strings: cannot happen
			}
			b.WriteString("  " + string(line))
			if i < len(cases)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("]")
	}

	// Every input goes through number, the others take a share of them
	// (they format through the same code): the file stays small.
	var number, bytes, percent, signedPercent [][]any
	for i, v := range nums {
		number = append(number, []any{jsNum(v), Number(v)})
		if i%2 == 1 {
			continue
		}
		bytes = append(bytes, []any{jsNum(v), Bytes(v)})
		// Shares are percentages: most cases between -1000 and 1000.
		p := v
		if math.Abs(p) > 1e4 {
			p = math.Mod(p, 1e4)
		}
		percent = append(percent, []any{jsNum(p), Percent(p)})
		signedPercent = append(signedPercent, []any{jsNum(p), SignedPercent(p)})
	}
	var profile, signedProfile [][]any
	for i, v := range nums {
		// Each unit with a spread of values.
		u := units[i%len(units)]
		profile = append(profile, []any{jsNum(v), u, ProfileValue(v, u)})
		if i%3 == 0 {
			signedProfile = append(signedProfile, []any{jsNum(v), u, SignedProfileValue(v, u)})
		}
	}
	var duration [][]any
	for _, d := range caseDurations() {
		duration = append(duration, []any{int64(d), Duration(d)})
	}
	section("number", true, number)
	section("bytes", false, bytes)
	section("percent", false, percent)
	section("signedPercent", false, signedPercent)
	section("profileValue", false, profile)
	section("signedProfileValue", false, signedProfile)
	section("duration", false, duration)
	b.WriteString("\n}\n")
	return b.String()
}

// jsNum is v for JSON: a number, or the string JavaScript's Number()
// turns into v.
func jsNum(v float64) any {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return v
}

// caseNumbers are the inputs of the number-like cases: the edges every
// rule has (magnitudes, carries, exact halves, neighbours of powers of
// ten, non-finite values, negative zero) and values drawn from a fixed
// seed across magnitudes, with few and with many significant digits.
func caseNumbers() []float64 {
	vs := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1),
		1, 1.5, 2.5, 100, 999.94, 999.95, 999.96, 99.995, 99.999, 0.9995, 0.9996, 0.5,
		0.125, 0.375, 2.125, 2.375, 1000.5, 1001.5, 0.0625, 0.03125,
		1023, 1023.95, 1023.96, 1024, 1536, 1048575, 1048576, 1 << 30, 1 << 40, 1 << 50, 1 << 60, 1 << 62,
		1e15, 1e15 + 0.5, 1e16, 1e21, 1e22, 1.7976931348623157e308, 5e-324, 1e-7, 1.5e-9, 9.995e-7,
		1e-6, 0.01234, 0.000123456, 1234567.89, 0.04, 0.05, 0.07, 0.0999, 0.15, 12.345}
	for e := -7; e <= 22; e++ {
		p, _ := strconv.ParseFloat("1e"+strconv.Itoa(e), 64)
		vs = append(vs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
	}
	r := rand.New(rand.NewPCG(12, 2025))
	for range 200 {
		e := r.IntN(26) - 9
		var m float64
		if r.IntN(2) == 0 {
			// Few digits: decimal fractions that sit on rounding edges.
			digits := 1 + r.IntN(5)
			m = float64(r.IntN(int(math.Pow10(digits)))) / math.Pow10(digits-1)
		} else {
			m = 1 + 9*r.Float64()
		}
		vs = append(vs, m*math.Pow10(e))
	}
	for i, n := 0, len(vs); i < n; i++ {
		if v := vs[i]; v > 0 && !math.IsInf(v, 0) {
			vs = append(vs, -v)
		}
	}
	return vs
}

// caseDurations are the inputs of duration's cases, in nanoseconds.
func caseDurations() []time.Duration {
	ds := []time.Duration{0, 1, 999, 1000, 999_999, time.Millisecond, 850 * time.Millisecond, time.Second - 1, time.Second,
		1_049_999_999, 1_050_000_000, 12345 * time.Millisecond, 59_949_999_999, 59_950_000_000, 59_960 * time.Millisecond,
		time.Minute, 65*time.Second + 499*time.Millisecond, 65*time.Second + 500*time.Millisecond, time.Hour - 500*time.Millisecond,
		time.Hour, 2*time.Hour + 3*time.Minute + 9*time.Second, 100 * time.Hour, 1 << 52,
		-1500 * time.Millisecond, -time.Hour}
	r := rand.New(rand.NewPCG(7, 2025))
	for range 100 {
		ds = append(ds, time.Duration(r.Int64N(int64(math.Pow10(3+r.IntN(11))))))
	}
	return ds
}
