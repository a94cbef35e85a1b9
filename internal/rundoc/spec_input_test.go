package rundoc

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nonFinite are spellings of NaN and ±Inf that strconv and fmt accept, and
// numbers that overflow float64 into ±Inf.
var nonFinite = []string{"NaN", "nan", "+Inf", "-Inf", "inf", "Infinity", "-infinity", "1e400", "-1e400"}

// TestNonFiniteFloatsRefused: no float flag takes NaN or ±Inf, from the
// command line or from params, and the error names the flag. Before, NaN
// passed every range check (all comparisons with NaN are false) and the
// spec then failed to encode, which the server stored as "params": null.
func TestNonFiniteFloatsRefused(t *testing.T) {
	flags := []struct {
		workload    Workload
		name, field string
	}{
		{Producer, "throughput", "throughput"},
		{Producer, "payload-entropy", "payload-entropy"},
		{Producer, "duration", "duration"},
		{Writepath, "duration", "duration"},
		{Writepath, "request-rate", "request-rate"},
		{Writepath, "throughput", "request-rate"}, // the alias
		{E2E, "backlog-drain-ratio", "backlog-drain-ratio"},
		{E2E, "warmup", "warmup"},
		{E2E, "payload-random-ratio", "payload-random-ratio"},
	}
	// Every float flag of the table is covered here.
	for _, o := range options() {
		if o.kind != kindFloat {
			continue
		}
		covered := false
		for _, f := range flags {
			covered = covered || f.field == o.name
		}
		if !covered {
			t.Errorf("float flag --%s is not tested with non-finite values", o.name)
		}
	}
	for _, f := range flags {
		for _, v := range nonFinite {
			_, err := ParseArgs(f.workload, []string{"--" + f.name, v})
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != f.field {
				t.Errorf("ParseArgs(%s, --%s %s) = %v, want an error for %s", f.workload, f.name, v, err, f.field)
			}
			raw, _ := json.Marshal(v)
			_, err = SpecFromParams(f.workload, map[string]json.RawMessage{f.name: raw})
			if !errors.As(err, &fe) || fe.Field != f.field {
				t.Errorf("SpecFromParams(%s, %s=%s) = %v, want an error for %s", f.workload, f.name, raw, err, f.field)
			}
		}
		// A JSON number too large for float64 is refused as well.
		_, err := SpecFromParams(f.workload, map[string]json.RawMessage{f.name: json.RawMessage(`1e400`)})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != f.field {
			t.Errorf("SpecFromParams(%s, %s=1e400) = %v, want an error for %s", f.workload, f.name, err, f.field)
		}
	}
}

// TestSpecEncodingErrorsSurface: a spec that cannot be encoded (only a
// non-finite float can make encoding/json fail) is an error everywhere it
// is written or identified, never a silent null.
func TestSpecEncodingErrorsSurface(t *testing.T) {
	s := DefaultSpec(Producer)
	s.Throughput = math.NaN()
	if p, err := s.Params(); err == nil {
		t.Errorf("Params of a NaN spec = %s, want an error", p)
	}
	if fp, err := s.Fingerprint(); err == nil {
		t.Errorf("Fingerprint of a NaN spec = %q, want an error", fp)
	}
	if err := WriteSpecFile(filepath.Join(t.TempDir(), "spec.json"), s); err == nil {
		t.Error("WriteSpecFile wrote a NaN spec")
	}
}

// TestSpecFileStrict: a spec file that does not say what to run is refused
// rather than run with the defaults.
func TestSpecFileStrict(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"null params":    `{"workload":"producer","params":null}`,
		"missing params": `{"workload":"producer"}`,
		"misspelt key":   `{"workload":"producer","parms":{"num-records":5}}`,
		"trailing data":  `{"workload":"producer","params":{}} {"workload":"consumer","params":{}}`,
		"not an object":  `[{"workload":"producer","params":{}}]`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := ReadSpecFile(path, func(string) string { return "" }); err == nil {
			t.Errorf("%s: ReadSpecFile accepted %s as %+v", name, body, s)
		}
	}
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte(`{"workload":"producer","params":{}}`), 0o600)
	if _, err := ReadSpecFile(ok, func(string) string { return "" }); err != nil {
		t.Errorf("empty params (every default) refused: %v", err)
	}
}

// TestParamNumbersExact: JSON numbers reach the flag parsers as written, so
// a large count is not rounded through float64, and a whole number written
// as a float still counts as one.
func TestParamNumbersExact(t *testing.T) {
	s, err := SpecFromParams(Producer, map[string]json.RawMessage{"num-records": json.RawMessage(`12345678901234567`)})
	if err != nil || s.NumRecords != 12345678901234567 {
		t.Errorf("num-records 12345678901234567 = %d, %v", s.NumRecords, err)
	}
	s, err = SpecFromParams(Producer, map[string]json.RawMessage{"num-records": json.RawMessage(`1e3`), "throughput": json.RawMessage(`2.5`)})
	if err != nil || s.NumRecords != 1000 || s.Throughput != 2.5 {
		t.Errorf("num-records 1e3, throughput 2.5 = %d, %v, %v", s.NumRecords, s.Throughput, err)
	}
	for _, raw := range []string{`1.5`, `1e30`, `9223372036854775808`} {
		_, err := SpecFromParams(Producer, map[string]json.RawMessage{"num-records": json.RawMessage(raw)})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "num-records" {
			t.Errorf("num-records %s = %v, want refused", raw, err)
		}
	}
}

// TestRatesAndDurationsBounded: values whose arithmetic would overflow
// time.Duration (and so silently unthrottle or end a run at once) are
// refused by name.
func TestRatesAndDurationsBounded(t *testing.T) {
	tests := []struct {
		workload Workload
		args     []string
		field    string
	}{
		{Producer, []string{"--throughput", "1e-12"}, "throughput"},
		{Writepath, []string{"--request-rate", "0.0000001"}, "request-rate"},
		{Writepath, []string{"--duration", "1e300"}, "duration"},
		{Writepath, []string{"--duration", "1e-300"}, "duration"},
	}
	for _, tt := range tests {
		_, err := ParseArgs(tt.workload, tt.args)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("ParseArgs(%s, %q) = %v, want an error for %s", tt.workload, tt.args, err, tt.field)
		}
	}
	for _, args := range [][]string{{"--throughput", "0.001"}, {"--throughput", "1e12"}} {
		if _, err := ParseArgs(Producer, args); err != nil {
			t.Errorf("ParseArgs(producer, %q): %v", args, err)
		}
	}
	if _, err := ParseArgs(Writepath, []string{"--duration", "0.5"}); err != nil {
		t.Errorf("--duration 0.5: %v", err)
	}
}

// TestAllFieldErrorsReported: one input with several bad fields reports
// each of them, once, in the option table's order (the form's), and
// errors.As still finds the first.
func TestAllFieldErrorsReported(t *testing.T) {
	fields := func(err error) []string {
		var fes FieldErrors
		if !errors.As(err, &fes) {
			t.Fatalf("%v is not a FieldErrors", err)
		}
		var out []string
		for _, fe := range fes {
			out = append(out, fe.Field)
		}
		return out
	}
	tests := []struct {
		name string
		err  func() error
		want []string
	}{
		{"args", func() error {
			_, err := ParseArgs(Producer, []string{"--throughput", "NaN", "--num-records", "ten", "--record-size", "0", "--threads", "0"})
			return err
		}, []string{"num-records", "record-size", "throughput", "threads"}},
		{"params", func() error {
			_, err := SpecFromParams(Producer, map[string]json.RawMessage{
				"topic": json.RawMessage(`"a b"`), "num-records": json.RawMessage(`-5`), "throughput": json.RawMessage(`"NaN"`),
				"mode": json.RawMessage(`"turbo"`), "profile": json.RawMessage(`"disk"`), "producer-props": json.RawMessage(`{"acks":"most"}`)})
			return err
		}, []string{"topic", "num-records", "throughput", "profile", "mode"}}, // acks=most is the runner's to refuse (runner's TestValidateOrdersFieldErrors)
		{"consumer", func() error {
			_, err := SpecFromParams(Consumer, map[string]json.RawMessage{
				"fetch-size": json.RawMessage(`0`), "timeout": json.RawMessage(`0`), "partitions": json.RawMessage(`0`)})
			return err
		}, []string{"partitions", "fetch-size", "timeout"}},
		// --duration is shared with the producer and the consumer, so it
		// comes before the write path's own flags.
		{"writepath", func() error {
			_, err := SpecFromParams(Writepath, map[string]json.RawMessage{
				"strategy": json.RawMessage(`"sideways"`), "in-flight": json.RawMessage(`0`), "acks": json.RawMessage(`"0"`),
				"duration": json.RawMessage(`"Inf"`), "records-per-request": json.RawMessage(`0`)})
			return err
		}, []string{"duration", "strategy", "records-per-request", "in-flight", "acks"}},
	}
	for _, tt := range tests {
		err := tt.err()
		if got := fields(err); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: fields %q, want %q (%v)", tt.name, got, tt.want, err)
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.want[0] {
			t.Errorf("%s: errors.As finds %v, want the first, %s", tt.name, fe, tt.want[0])
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", tt.name, err)
		}
	}
	// A field whose value does not parse is not judged again by the range
	// checks, and a cross-field check does not blame a valid field for an
	// invalid one.
	_, err := ParseArgs(Producer, []string{"--num-records", "-5", "--warmup-records", "0"})
	if got := fields(err); strings.Join(got, " ") != "num-records" {
		t.Errorf("num-records -5, warmup 0: fields %q, want only num-records", got)
	}
}

// TestChoicesShared: a flag with a closed set of values accepts each of
// its choices for the workloads they belong to, refuses anything else
// naming them all, and --help lists them: the form's selects read the
// same list (Flags).
func TestChoicesShared(t *testing.T) {
	// companions are flags a choice needs beside it to apply at all.
	companions := map[string][]string{"key-order": {"--key-size", "8"}}
	withChoices := map[string]bool{}
	for _, f := range Flags() {
		if len(f.Choices) == 0 {
			continue
		}
		withChoices[f.Name] = true
		for _, w := range f.Workloads {
			var names []string
			for _, c := range f.Choices {
				if c.For(w) {
					names = append(names, c.Value)
				}
			}
			for _, c := range f.Choices {
				_, err := ParseArgs(w, append([]string{"--" + f.Name, c.Value}, companions[f.Name]...))
				if c.For(w) && err != nil {
					t.Errorf("%s --%s %s: %v", w, f.Name, c.Value, err)
				}
				if !c.For(w) && err == nil {
					t.Errorf("%s --%s %s accepted, but the choice is only for %v", w, f.Name, c.Value, c.Workloads)
				}
			}
			_, err := ParseArgs(w, append([]string{"--" + f.Name, "bogus"}, companions[f.Name]...))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != f.Name {
				t.Errorf("%s --%s bogus = %v, want refused", w, f.Name, err)
				continue
			}
			for _, n := range names {
				if !strings.Contains(fe.Msg, n) {
					t.Errorf("%s --%s bogus: %q does not list %s", w, f.Name, fe.Msg, n)
				}
			}
			if u := Usage(w); !strings.Contains(u, strings.Join(names, ", ")) && !strings.Contains(u, names[0]) {
				t.Errorf("--help of %s does not list the choices of --%s", w, f.Name)
			}
		}
	}
	for _, name := range []string{"mode", "strategy", "acks"} {
		if !withChoices[name] {
			t.Errorf("--%s has no choices in the option table", name)
		}
	}
	// acks keeps Kafka's synonym -1 for all, and its own message for 0.
	if s, err := ParseArgs(Writepath, []string{"--acks", "-1"}); err != nil || s.Acks != "-1" {
		t.Errorf("--acks -1: %v", err)
	}
	if _, err := ParseArgs(Writepath, []string{"--acks", "0"}); err == nil || !strings.Contains(err.Error(), "not measurable") {
		t.Errorf("--acks 0: %v, want the reason", err)
	}
}

// TestConsumerCountIsMessages: the consumer's count is --messages, as in
// kafka-consumer-perf-test; --num-records stays accepted, from the command
// line and in params, and stored specs keep their key (and fingerprints).
func TestConsumerCountIsMessages(t *testing.T) {
	for _, args := range [][]string{{"--messages", "42"}, {"--num-records", "42"}} {
		if s, err := ParseArgs(Consumer, args); err != nil || s.NumRecords != 42 {
			t.Errorf("consumer %q: %d, %v", args, s.NumRecords, err)
		}
	}
	for _, key := range []string{"messages", "num-records"} {
		s, err := SpecFromParams(Consumer, map[string]json.RawMessage{key: json.RawMessage(`42`)})
		if err != nil || s.NumRecords != 42 {
			t.Errorf("consumer params %s: %d, %v", key, s.NumRecords, err)
		}
		if p := specParams(t, s); string(p["num-records"]) != "42" {
			t.Errorf("consumer params %s: stored as %v, want num-records", key, p)
		}
	}
	_, err := ParseArgs(Consumer, []string{"--messages", "0"})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "messages" {
		t.Errorf("consumer --messages 0 = %v, want an error for messages", err)
	}
	if u := Usage(Consumer); !strings.Contains(u, "--messages, --num-records") || !strings.Contains(u, "(default 500000)") {
		t.Errorf("consumer --help:\n%s", u)
	}
	if u := Usage(Producer); !strings.Contains(u, "--num-records, --messages") {
		t.Errorf("producer --help:\n%s", u)
	}
	var counts []string
	for _, f := range Flags() {
		if f.Name == "messages" || f.Name == "num-records" {
			counts = append(counts, f.Name+"="+strings.Join(names(f.Workloads), "+")+"/"+f.Default)
		}
	}
	if got := strings.Join(counts, " "); got != "num-records=producer+e2e/500000 messages=consumer/500000" {
		t.Errorf("count flags: %s", got)
	}
}

// FuzzSpecFromParams: whatever params are accepted give a spec that
// encodes and reads back the same (no NaN, no silent default), and every
// refusal names its fields.
func FuzzSpecFromParams(f *testing.F) {
	f.Add("producer", `{"throughput":"NaN","num-records":10}`)
	f.Add("writepath", `{"duration":1.5,"strategy":"copy","acks":"-1"}`)
	f.Add("consumer", `{"messages":"1e3","mode":"assign","consumer-props":{"fetch.min.bytes":2}}`)
	f.Add("producer", `{"throughput":1e-400,"record-size":"+7","profile":["cpu","none"]}`)
	f.Fuzz(func(t *testing.T, workload, body string) {
		var params map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &params) != nil {
			return
		}
		for k := range params {
			if strings.HasSuffix(k, ".config") || k == "payload-file" {
				return // they read files
			}
		}
		s, err := SpecFromParams(Workload(workload), params)
		if err != nil {
			var fes FieldErrors
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("refusal without a field: %v", err)
			}
			if errors.As(err, &fes) {
				for _, e := range fes {
					if e.Field == "" {
						t.Fatalf("refusal without a field: %v", err)
					}
				}
			}
			return
		}
		p, err := s.Params()
		if err != nil {
			t.Fatalf("accepted %s but cannot encode it: %v", body, err)
		}
		again, err := SpecFromParams(Workload(workload), p)
		if err != nil {
			t.Fatalf("accepted %s, its params %v are refused: %v", body, p, err)
		}
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("round trip of %s:\n%s\n%s", body, a, b)
		}
	})
}
