package rundoc

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "producer.properties")
	os.WriteFile(cfg, []byte("# from a Java setup\nacks=1\nlinger.ms = 20\nclient.id:from-file\n"), 0o644)
	tests := []struct {
		name     string
		workload Workload
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
		// Kafka 4.2's names (KIP-1147) for the properties and their file.
		{"kafka 4.2 producer names", Producer, []string{"--command-property", "acks=0", "--command-config", cfg}, func(t *testing.T, s Spec) {
			want := map[string]string{"acks": "0", "linger.ms": "20", "client.id": "from-file"}
			if !reflect.DeepEqual(s.Props, want) {
				t.Errorf("props = %v, want %v", s.Props, want)
			}
		}},
		{"kafka 4.2 consumer names", Consumer, []string{"--num-records", "42", "--command-config", cfg, "--command-property", "max.poll.records=7"}, func(t *testing.T, s Spec) {
			want := map[string]string{"acks": "1", "linger.ms": "20", "client.id": "from-file", "max.poll.records": "7"}
			if s.NumRecords != 42 || !reflect.DeepEqual(s.Props, want) {
				t.Errorf("records %d, props = %v, want %v", s.NumRecords, s.Props, want)
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

// TestParseArgsErrorsNameTheFlag: the contract's own checks name the flag
// (the Kafka properties are the runner's to check: runner's
// TestValidateNamesTheProperties).
func TestParseArgsErrorsNameTheFlag(t *testing.T) {
	tests := []struct {
		workload Workload
		args     []string
		field    string
	}{
		{Producer, []string{"--num-records", "ten"}, "num-records"},
		{Producer, []string{"--num-records", "0"}, "num-records"},
		{Producer, []string{"--bogus", "1"}, "bogus"},
		{Producer, []string{"--throughput", "0"}, "throughput"},
		{Producer, []string{"--profile", "cpu,disk"}, "profile"},
		{Producer, []string{"--warmup-records", "10", "--num-records", "10"}, "warmup-records"},
		{Producer, []string{"--group", "g"}, "group"}, // a consumer flag
		{Consumer, []string{"--mode", "turbo"}, "mode"},
		{Consumer, []string{"--timeout"}, "timeout"},
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

func mustParse(t *testing.T, workload Workload, args ...string) Spec {
	t.Helper()
	s, err := ParseArgs(workload, args)
	if err != nil {
		t.Fatalf("ParseArgs(%s, %q): %v", workload, args, err)
	}
	return s
}
