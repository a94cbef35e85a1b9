package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/kafkasec"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestValidateNamesTheProperties: with the runner's check (Validate),
// Kafka properties the client cannot honour are refused where the spec is
// given, naming the flag that carried them, in one line.
func TestValidateNamesTheProperties(t *testing.T) {
	tests := []struct {
		workload rundoc.Workload
		args     []string
		field    string
	}{
		{rundoc.Producer, []string{"--producer-props", "linger.ms=5", "frobnicate=1"}, "producer-props"},
		{rundoc.Producer, []string{"--producer-props", "acks=2"}, "producer-props"},
		{rundoc.Producer, []string{"--producer-props", "enable.idempotence=true"}, "producer-props"},
		{rundoc.Consumer, []string{"--consumer-props", "security.protocol=SASL_SSL"}, "consumer-props"},
	}
	for _, tt := range tests {
		_, err := rundoc.ParseArgs(tt.workload, tt.args, Validate)
		var fe *rundoc.FieldError
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
		// The same from params (the form, the API).
		params := map[string]json.RawMessage{}
		props := map[string]string{}
		for _, kv := range tt.args[1:] {
			k, v, _ := strings.Cut(kv, "=")
			props[k] = v
		}
		raw, _ := json.Marshal(props)
		params[strings.TrimPrefix(tt.args[0], "--")] = raw
		_, err = rundoc.SpecFromParams(tt.workload, params, Validate)
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("SpecFromParams(%s, %s) = %v, want a FieldError for %s", tt.workload, raw, err, tt.field)
		}
	}
	// Properties the client takes pass, and the write path takes none to
	// check.
	if _, err := rundoc.ParseArgs(rundoc.Producer, []string{"--producer-props", "acks=1", "linger.ms=0"}, Validate); err != nil {
		t.Errorf("valid properties refused: %v", err)
	}
	if _, err := rundoc.ParseArgs(rundoc.Writepath, nil, Validate); err != nil {
		t.Errorf("writepath defaults refused: %v", err)
	}
}

func TestUnsupportedPropertyListsSupported(t *testing.T) {
	_, err := rundoc.ParseArgs(rundoc.Producer, []string{"--producer-props", "frobnicate=1"}, Validate)
	for _, want := range []string{"frobnicate", "acks", "linger.ms", "batch.size", "compression.type", "client.id", "max.in.flight.requests.per.connection"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

// TestValidateOrdersFieldErrors: the runner's errors join the contract's
// in the option table's order (the form's), once each.
func TestValidateOrdersFieldErrors(t *testing.T) {
	_, err := rundoc.SpecFromParams(rundoc.Producer, map[string]json.RawMessage{
		"topic": json.RawMessage(`"a b"`), "num-records": json.RawMessage(`-5`), "throughput": json.RawMessage(`"NaN"`),
		"mode": json.RawMessage(`"turbo"`), "profile": json.RawMessage(`"disk"`), "producer-props": json.RawMessage(`{"acks":"most"}`)}, Validate)
	var fes rundoc.FieldErrors
	if !errors.As(err, &fes) {
		t.Fatalf("%v is not a FieldErrors", err)
	}
	var got []string
	for _, fe := range fes {
		got = append(got, fe.Field)
	}
	if want := "topic num-records throughput producer-props profile mode"; strings.Join(got, " ") != want {
		t.Errorf("fields %q, want %q (%v)", got, want, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

// TestRequestTarget: the write path's measured requests are --requests,
// none with --duration (the clock ends the run), and
// rundoc.DefaultWritepathRequests without either.
func TestRequestTarget(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{nil, 20000},
		{[]string{"--requests", "7"}, 7},
		{[]string{"--duration", "2"}, 0},
	} {
		s := mustParse(t, rundoc.Writepath, tc.args...)
		if got := requestTarget(&s); got != tc.want {
			t.Errorf("%q: requestTarget = %d, want %d", tc.args, got, tc.want)
		}
	}
}

// TestRunRefusesOversizedTLSFile: a run's own process reads its TLS
// files, each of at most kafkasec.MaxFileSize bytes; a larger one (here
// a sparse file of 1 MiB and a byte) fails the run at once with an error
// naming the property and the limit, before any broker is dialled (the
// one named here does not exist).
func TestRunRefusesOversizedTLSFile(t *testing.T) {
	big := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, kafkasec.MaxFileSize+1); err != nil {
		t.Fatal(err)
	}
	spec, err := rundoc.ParseArgs(rundoc.Producer, []string{"--bootstrap-server", "127.0.0.1:1", "--num-records", "10",
		"--producer-props", "security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location=" + big}, Validate)
	if err != nil {
		t.Fatalf("validation read the file or refused its path: %v", err)
	}
	_, err = Run(context.Background(), spec, Options{})
	if err == nil || !strings.Contains(err.Error(), "ssl.truststore.location") || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("Run = %v, want an error naming ssl.truststore.location and the 1 MiB limit", err)
	}
}

// TestValidateLooksForThePayloadFile: the runner's check, which a run's
// own process and the command line apply, refuses a payload file that
// is not there (the contract, which a server applies, does not look).
func TestValidateLooksForThePayloadFile(t *testing.T) {
	_, err := rundoc.ParseArgs(rundoc.Producer, []string{"--payload-file", "/does/not/exist"}, Validate)
	var fe *rundoc.FieldError
	if !errors.As(err, &fe) || fe.Field != "payload-file" {
		t.Errorf("ParseArgs with a missing payload file: %v, want an error for payload-file", err)
	}
}
