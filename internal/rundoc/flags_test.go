package rundoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDurationFlag: the producer and the consumer take --duration (seconds,
// after any warm-up) instead of their count; giving both is refused naming
// both flags, bad values name --duration, and a spec with a duration
// survives the round trip through params (what `kbench serve` hands its
// child runs).
func TestDurationFlag(t *testing.T) {
	for _, tc := range []struct {
		workload Workload
		count    string
	}{{Producer, "num-records"}, {Consumer, "messages"}} {
		s, err := ParseArgs(tc.workload, []string{"--duration", "2.5", "--warmup-records", "1000"})
		if err != nil {
			t.Fatalf("%s --duration 2.5: %v", tc.workload, err)
		}
		if s.Duration != 2.5 || s.NumRecords != 0 || s.WarmupRecords != 1000 {
			t.Errorf("%s: duration %v, count %d, warm-up %d; want 2.5, 0 (no count) and 1000", tc.workload, s.Duration, s.NumRecords, s.WarmupRecords)
		}
		params, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		back, err := SpecFromParams(tc.workload, params)
		if err != nil || back.Duration != 2.5 || back.NumRecords != 0 {
			t.Errorf("%s: params round trip: %+v, %v", tc.workload, back, err)
		}
		if err := back.Validate(); err != nil {
			t.Errorf("%s: Validate after the round trip: %v", tc.workload, err)
		}

		_, err = ParseArgs(tc.workload, []string{"--duration", "5", "--" + tc.count, "100"})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "duration" || !strings.Contains(err.Error(), "--"+tc.count) {
			t.Errorf("%s: --duration with --%s: %v, want an error on duration naming --%s", tc.workload, tc.count, err, tc.count)
		}
		_, err = SpecFromParams(tc.workload, map[string]json.RawMessage{"duration": json.RawMessage(`5`), tc.count: json.RawMessage(`100`)})
		if !errors.As(err, &fe) || fe.Field != "duration" {
			t.Errorf("%s: params with duration and %s: %v, want an error on duration", tc.workload, tc.count, err)
		}
		for _, bad := range []string{"-1", "0", "1e300", "NaN"} {
			_, err := ParseArgs(tc.workload, []string{"--duration", bad})
			if !errors.As(err, &fe) || fe.Field != "duration" {
				t.Errorf("%s --duration %s: %v, want an error on duration", tc.workload, bad, err)
			}
		}
		if s := DefaultSpec(tc.workload); s.Duration != 0 || s.NumRecords != 500000 {
			t.Errorf("%s: default spec has duration %v and count %d; the CLI's defaults stay a count", tc.workload, s.Duration, s.NumRecords)
		}
	}
	if _, err := ParseArgs(Writepath, []string{"--duration", "5", "--requests", "10"}); err == nil {
		t.Error("writepath took --duration and --requests together")
	}
}

// TestPayloadFlags: --payload-entropy, --key-size and --headers take their
// ranges and name themselves when refused.
func TestPayloadFlags(t *testing.T) {
	s := mustParse(t, Producer, "--payload-entropy", "0.5", "--key-size", "16", "--headers", "3")
	if s.PayloadEntropy == nil || *s.PayloadEntropy != 0.5 || s.KeySize != 16 || s.Headers != 3 {
		t.Errorf("spec %+v", s)
	}
	if d := DefaultSpec(Producer); d.PayloadEntropy != nil || d.KeySize != 0 || d.Headers != 0 {
		t.Errorf("defaults: entropy %v, key size %d, headers %d; want today's payload, null keys, no headers", d.PayloadEntropy, d.KeySize, d.Headers)
	}
	params, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	back, err := SpecFromParams(Producer, params)
	if err != nil || back.PayloadEntropy == nil || *back.PayloadEntropy != 0.5 || back.KeySize != 16 || back.Headers != 3 {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	for _, tc := range []struct {
		args  []string
		field string
	}{
		{[]string{"--payload-entropy", "1.5"}, "payload-entropy"},
		{[]string{"--payload-entropy", "-0.1"}, "payload-entropy"},
		{[]string{"--payload-entropy", "NaN"}, "payload-entropy"},
		{[]string{"--key-size", "-1"}, "key-size"},
		{[]string{"--key-size", "2000000"}, "key-size"},
		{[]string{"--headers", "-1"}, "headers"},
		{[]string{"--headers", "1001"}, "headers"},
	} {
		_, err := ParseArgs(Producer, tc.args)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%q: %v, want an error on %s", tc.args, err, tc.field)
		}
	}
	for _, flag := range []string{"--payload-entropy", "--key-size", "--headers"} {
		if _, err := ParseArgs(Consumer, []string{flag, "1"}); err == nil {
			t.Errorf("the consumer took %s", flag)
		}
	}
}

func TestWritepathFlags(t *testing.T) {
	s := mustParse(t, Writepath)
	if s.Strategy != StrategyGather || s.RecordsPerRequest != 16 || s.RecordSize != 256 || s.InFlight != 5 || s.Acks != "all" {
		t.Errorf("defaults: %+v", s)
	}
	// Neither --requests nor --duration: the run sends the default count
	// of requests (runner's requestTarget, tested there).
	if s.Requests != 0 || s.Duration != 0 || DefaultWritepathRequests != 20000 {
		t.Errorf("defaults: requests %d, duration %v, default requests %d; want 0, 0 and 20000", s.Requests, s.Duration, DefaultWritepathRequests)
	}
	s = mustParse(t, Writepath, "--strategy", "per-buffer", "--throughput", "500", "--requests=7", "--records-per-request", "4",
		"--record-size", "16384", "--in-flight", "1", "--warmup-requests", "3", "--acks", "1", "--sink", "--topic", "x")
	if s.Strategy != StrategyPerBuffer || s.Throughput != 500 || s.Requests != 7 || s.RecordsPerRequest != 4 || s.RecordSize != 16384 ||
		s.InFlight != 1 || s.WarmupRequests != 3 || s.Acks != "1" || !s.Sink || s.Topic != "x" {
		t.Errorf("parsed: %+v", s)
	}
	// The same spec from API params, and back: Params names every flag
	// the workload takes, so spec files round-trip.
	params := map[string]json.RawMessage{}
	for k, v := range map[string]string{"strategy": `"per-buffer"`, "throughput": `500`, "requests": `7`, "records-per-request": `4`,
		"record-size": `16384`, "in-flight": `1`, "warmup-requests": `3`, "acks": `"1"`, "sink": `true`, "topic": `"x"`} {
		params[k] = json.RawMessage(v)
	}
	fromParams, err := SpecFromParams(Writepath, params)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(s)
	b, _ := json.Marshal(fromParams)
	if !bytes.Equal(a, b) {
		t.Errorf("params give\n%s\nargs give\n%s", b, a)
	}
	again, err := SpecFromParams(Writepath, specParams(t, s))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := json.Marshal(again); !bytes.Equal(a, c) || fp(t, again) != fp(t, s) {
		t.Errorf("Params round trip gives\n%s\nwant\n%s", c, a)
	}
	if _, ok := specParams(t, s)["num-records"]; ok {
		t.Error("writepath params carry num-records")
	}
	// Producer specs are unchanged by the write-path fields.
	if data, _ := json.Marshal(DefaultSpec(Producer)); bytes.Contains(data, []byte("strategy")) || bytes.Contains(data, []byte("in-flight")) {
		t.Errorf("producer spec JSON has write-path fields: %s", data)
	}
	var names []string
	for _, f := range Flags() {
		for _, w := range f.Workloads {
			if w == Writepath {
				names = append(names, f.Name)
			}
		}
	}
	for _, want := range []string{"topic", "bootstrap-server", "record-size", "strategy", "requests", "records-per-request", "in-flight", "request-rate", "sink", "profile"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("Flags() lists no %s for writepath (has %v)", want, names)
		}
	}
}

func TestWritepathBadFlagsNameTheFlag(t *testing.T) {
	tests := []struct {
		args  []string
		field string
	}{
		{[]string{"--strategy", "zerocopy"}, "strategy"},
		{[]string{"--records-per-request", "0"}, "records-per-request"},
		{[]string{"--records-per-request", "many"}, "records-per-request"},
		{[]string{"--records-per-request", "100000", "--record-size", "1000"}, "records-per-request"},
		{[]string{"--record-size", "0"}, "record-size"},
		{[]string{"--in-flight", "0"}, "in-flight"},
		{[]string{"--in-flight", "5000"}, "in-flight"},
		{[]string{"--requests", "-1"}, "requests"},
		{[]string{"--duration", "-2"}, "duration"},
		{[]string{"--duration", "5", "--requests", "10"}, "duration"},
		{[]string{"--warmup-requests", "-1"}, "warmup-requests"},
		{[]string{"--throughput", "0"}, "request-rate"},
		{[]string{"--request-rate", "-5"}, "request-rate"},
		{[]string{"--acks", "0"}, "acks"},
		{[]string{"--acks", "some"}, "acks"},
		{[]string{"--sink", "--bootstrap-server", "k:9092"}, "sink"},
		{[]string{"--sink=maybe"}, "sink"},
		{[]string{"--num-records", "5"}, "num-records"},
		{[]string{"--producer-props", "acks=1"}, "producer-props"},
		{[]string{"--threads", "2"}, "threads"},
		{[]string{"--reporting-interval", "5"}, "reporting-interval"},
		{[]string{"--topic", "a b"}, "topic"},
	}
	for _, tt := range tests {
		_, err := ParseArgs(Writepath, tt.args)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("ParseArgs(writepath, %q) = %v, want a FieldError for --%s", tt.args, err, tt.field)
		}
	}
	_, err := SpecFromParams(Writepath, map[string]json.RawMessage{"strategy": json.RawMessage(`"nope"`)})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "strategy" {
		t.Errorf("SpecFromParams with a bad strategy: %v", err)
	}
	if _, err := ParseArgs("writepaths", nil); !errors.As(err, &fe) || fe.Field != "workload" {
		t.Errorf("unknown workload: %v", err)
	}
}
