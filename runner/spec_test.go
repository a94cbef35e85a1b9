package runner

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "producer.properties")
	os.WriteFile(cfg, []byte("# from a Java setup\nacks=1\nlinger.ms = 20\nclient.id:from-file\n"), 0o644)
	tests := []struct {
		name     string
		workload string
		args     []string
		check    func(t *testing.T, s Spec)
	}{
		{"defaults", Producer, nil, func(t *testing.T, s Spec) {
			if s.Throughput != -1 || s.NumRecords != 500000 || !slices.Equal(s.Profiles, []string{"cpu", "heap"}) {
				t.Errorf("got %+v", s)
			}
		}},
		{"kafka flags", Producer, []string{"--topic", "t1", "--num-records", "1000", "--record-size=256", "--throughput", "-1",
			"--print-metrics", "--producer-props", "acks=all", "batch.size=65536", "--threads", "3"}, func(t *testing.T, s Spec) {
			want := map[string]string{"acks": "all", "batch.size": "65536"}
			if s.Topic != "t1" || s.NumRecords != 1000 || s.RecordSize != 256 || !s.PrintMetrics || s.Threads != 3 || !reflect.DeepEqual(s.Props, want) {
				t.Errorf("got %+v", s)
			}
		}},
		{"props override config file in any order", Producer, []string{"--producer-props", "acks=0", "--producer.config", cfg}, func(t *testing.T, s Spec) {
			want := map[string]string{"acks": "0", "linger.ms": "20", "client.id": "from-file"}
			if !reflect.DeepEqual(s.Props, want) {
				t.Errorf("props = %v, want %v", s.Props, want)
			}
		}},
		{"consumer alias and mode", Consumer, []string{"--messages", "42", "--mode", "assign", "--fetch-size", "4096"}, func(t *testing.T, s Spec) {
			if s.NumRecords != 42 || s.Mode != ModeAssign || s.FetchSize != 4096 || s.Timeout != 10000 {
				t.Errorf("got %+v", s)
			}
		}},
		{"profile none", Producer, []string{"--profile", "none"}, func(t *testing.T, s Spec) {
			if len(s.Profiles) != 0 {
				t.Errorf("profiles = %v, want none", s.Profiles)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseArgs(tt.workload, tt.args)
			if err != nil {
				t.Fatalf("ParseArgs: %v", err)
			}
			tt.check(t, s)
		})
	}
}

func TestParseArgsErrorsNameTheFlag(t *testing.T) {
	tests := []struct {
		workload string
		args     []string
		field    string
	}{
		{Producer, []string{"--num-records", "ten"}, "num-records"},
		{Producer, []string{"--num-records", "0"}, "num-records"},
		{Producer, []string{"--bogus", "1"}, "bogus"},
		{Producer, []string{"--throughput", "0"}, "throughput"},
		{Producer, []string{"--producer-props", "linger.ms=5", "frobnicate=1"}, "producer-props"},
		{Producer, []string{"--producer-props", "acks=2"}, "producer-props"},
		{Producer, []string{"--producer-props", "enable.idempotence=true"}, "producer-props"},
		{Producer, []string{"--profile", "cpu,disk"}, "profile"},
		{Producer, []string{"--warmup-records", "10", "--num-records", "10"}, "warmup-records"},
		{Producer, []string{"--group", "g"}, "group"}, // a consumer flag
		{Consumer, []string{"--mode", "turbo"}, "mode"},
		{Consumer, []string{"--timeout"}, "timeout"},
		{Consumer, []string{"--consumer-props", "security.protocol=SASL_SSL"}, "consumer-props"},
		{Producer, []string{"--payload-file", "/does/not/exist"}, "payload-file"},
	}
	for _, tt := range tests {
		_, err := ParseArgs(tt.workload, tt.args)
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("ParseArgs(%s, %q) = %v, want a FieldError", tt.workload, tt.args, err)
			continue
		}
		if fe.Field != tt.field {
			t.Errorf("ParseArgs(%s, %q): field %q, want %q (%v)", tt.workload, tt.args, fe.Field, tt.field, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
}

func TestUnsupportedPropertyListsSupported(t *testing.T) {
	_, err := ParseArgs(Producer, []string{"--producer-props", "frobnicate=1"})
	for _, want := range []string{"frobnicate", "acks", "linger.ms", "batch.size", "compression.type", "client.id", "max.in.flight.requests.per.connection"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestSpecFromParamsMatchesArgs(t *testing.T) {
	params := map[string]json.RawMessage{
		"num-records":    json.RawMessage(`100000`),
		"record-size":    json.RawMessage(`256`),
		"throughput":     json.RawMessage(`-1`),
		"producer-props": json.RawMessage(`{"acks": "1", "linger.ms": 10}`),
		"profile":        json.RawMessage(`["cpu", "allocs"]`),
		"print-metrics":  json.RawMessage(`true`),
	}
	got, err := SpecFromParams(Producer, params)
	if err != nil {
		t.Fatal(err)
	}
	want := mustParse(t, Producer, "--num-records", "100000", "--record-size", "256", "--throughput", "-1",
		"--producer-props", "acks=1", "linger.ms=10", "--profile", "cpu,allocs", "--print-metrics")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("params spec %+v\n differs from args spec %+v", got, want)
	}
	_, err = SpecFromParams(Producer, map[string]json.RawMessage{"record-size": json.RawMessage(`"big"`)})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "record-size" {
		t.Errorf("bad record-size: err = %v, want a FieldError for record-size", err)
	}
}

func TestRedactedSpecHidesSecrets(t *testing.T) {
	s := mustParse(t, Producer, "--bootstrap-server", "k:9093", "--producer-props", "security.protocol=SASL_SSL", "sasl.mechanism=PLAIN",
		"sasl.username=u", "sasl.password=hunter2")
	data, _ := json.Marshal(s.Redacted())
	if strings.Contains(string(data), "hunter2") {
		t.Errorf("redacted spec leaks the password: %s", data)
	}
	if s.Props["sasl.password"] != "hunter2" {
		t.Errorf("Redacted modified the original spec")
	}
}

func TestParseProperties(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
	}{
		{"a=1\nb = 2\n", map[string]string{"a": "1", "b": "2"}},
		{"# comment\n! also\n\n  key:value\n", map[string]string{"key": "value"}},
		{"key value with spaces", map[string]string{"key": "value with spaces"}},
		{"sasl.jaas.config=org.Plain required \\\n    username=\"u\" \\\n    password=\"p\";\n",
			map[string]string{"sasl.jaas.config": `org.Plain required username="u" password="p";`}},
		{`a\=b=c`, map[string]string{"a=b": "c"}},
		{"empty=", map[string]string{"empty": ""}},
		{"bare", map[string]string{"bare": ""}},
	}
	for _, tt := range tests {
		got, err := ParseProperties(tt.in)
		if err != nil {
			t.Errorf("ParseProperties(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseProperties(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"a=1\nb:2", "k v", "x=\\\ny", "#c\n!d\n=", `a\=b=c\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		props, err := ParseProperties(in)
		if err != nil {
			return
		}
		for k := range props {
			if k == "" {
				t.Fatalf("empty key from %q", in)
			}
		}
	})
}

func FuzzParseArgs(f *testing.F) {
	f.Add("--num-records 10 --record-size 5 --producer-props acks=1 linger.ms=0")
	f.Add("--throughput=-1 --print-metrics --profile cpu,heap")
	f.Fuzz(func(t *testing.T, line string) {
		s, err := ParseArgs(Producer, strings.Fields(line))
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) && fe.Field == "" {
				t.Fatalf("FieldError without a field: %v", err)
			}
			return
		}
		if s.NumRecords < 1 || s.Threads < 1 || s.Partitions < 1 {
			t.Fatalf("accepted an invalid spec: %+v", s)
		}
	})
}

// TestLatencyPercentilesMatchSort checks the histogram against the exact
// percentiles of the same latencies, within its 3 significant digits.
func TestLatencyPercentilesMatchSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h := newLatencyHist()
	var all []int64 // microseconds
	for i := 0; i < 200000; i++ {
		// Log-normal-ish: most around 2 ms, a long tail to seconds.
		us := int64(math.Exp(rng.NormFloat64()*1.2+7.5)) + 1
		all = append(all, us)
		h.record(time.Duration(us) * time.Microsecond)
	}
	slices.Sort(all)
	for _, q := range []float64{50, 95, 99, 99.9} {
		// HdrHistogram's rank for quantile q: round(q% of the count), at
		// least 1; the value is that rank's, to the histogram's precision.
		idx := max(int(q/100*float64(len(all))+0.5), 1) - 1
		exact := float64(all[idx]) / 1000
		got := h.quantileMs(q)
		if rel := math.Abs(got-exact) / exact; rel > 0.001 {
			t.Errorf("p%v = %.4f ms, exact %.4f ms: off by %.3f%%, more than the histogram's 0.1%%", q, got, exact, rel*100)
		}
	}
	if exact, got := float64(all[len(all)-1])/1000, h.maxMs(); math.Abs(got-exact)/exact > 0.001 {
		t.Errorf("max = %.4f ms, exact %.4f", got, exact)
	}
	var sum float64
	for _, v := range all {
		sum += float64(v)
	}
	if exact, got := sum/float64(len(all))/1000, h.meanMs(); math.Abs(got-exact)/exact > 0.001 {
		t.Errorf("mean = %.4f ms, exact %.4f", got, exact)
	}
	if h.count() != int64(len(all)) {
		t.Errorf("count = %d, want %d", h.count(), len(all))
	}
}

// TestLatencyMetrics: a histogram reports as named metrics in ms, in the
// order result pages show them, and skipped percentiles are left out.
func TestLatencyMetrics(t *testing.T) {
	h := newLatencyHist()
	for ms := 1; ms <= 1000; ms++ {
		h.record(time.Duration(ms) * time.Millisecond)
	}
	var names []string
	for _, m := range h.metrics("x-latency", "why") {
		names = append(names, m.Name)
		if m.Unit != "ms" || m.Better != LowerIsBetter || m.Help != "why" {
			t.Errorf("%s: %+v", m.Name, m)
		}
	}
	if want := "x-latency-avg x-latency-p50 x-latency-p95 x-latency-p99 x-latency-p999 x-latency-max"; strings.Join(names, " ") != want {
		t.Errorf("names %q, want %q", names, want)
	}
	ms := h.metrics("y", "", "p95")
	if len(ms) != 5 || ms[2].Name != "y-p99" {
		t.Errorf("skipping p95 gives %+v", ms)
	}
	if p50, max := ms[1].Value, ms[4].Value; math.Abs(p50-500) > 0.5 || math.Abs(max-1000) > 1 {
		t.Errorf("p50 %.3f ms, max %.3f ms; want 500 and 1000", p50, max)
	}
}

func TestSpecFileRoundTripKeepsSecretsOutOfTheFile(t *testing.T) {
	s := mustParse(t, Consumer, "--bootstrap-server", "k1:9093,k2:9093", "--messages", "1000", "--mode", "assign",
		"--consumer-props", "security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-256", "sasl.username=bench",
		"sasl.password=s3cr3t-pw", "ssl.endpoint.identification.algorithm=")
	public, secrets := SplitSecrets(s)
	if secrets["sasl.password"] != "s3cr3t-pw" || public.Props["sasl.password"] != "" {
		t.Fatalf("SplitSecrets: public %v, secrets %v", public.Props, secrets)
	}
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := WriteSpecFile(path, public); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "s3cr3t-pw") {
		t.Fatalf("spec file holds the password:\n%s", data)
	}
	env, _ := json.Marshal(secrets)
	got, err := ReadSpecFile(path, func(k string) string {
		if k == SecretPropsEnv {
			return string(env)
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
	}
	if fp(t, got) != fp(t, s) || len(fp(t, s)) != 16 {
		t.Errorf("fingerprint changed or malformed: %q vs %q", fp(t, got), fp(t, s))
	}
	other := s
	other.NumRecords++
	if fp(t, other) == fp(t, s) {
		t.Error("different workloads share a fingerprint")
	}
	reporting := s
	reporting.PrintMetrics = true
	if fp(t, reporting) != fp(t, s) {
		t.Error("--print-metrics changed the fingerprint")
	}
}

func fp(t *testing.T, s Spec) string {
	t.Helper()
	f, err := s.Fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func specParams(t *testing.T, s Spec) map[string]json.RawMessage {
	t.Helper()
	p, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
