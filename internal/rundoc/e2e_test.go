package rundoc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestE2ESpec: e2e takes Kafka's tool's arguments as flags, defaults to
// Kafka's mode, and refuses what only rate mode can do.
func TestE2ESpec(t *testing.T) {
	s, err := ParseArgs(E2E, []string{"--bootstrap-server", "h:9092", "--topic", "t", "--num-records", "100", "--producer-props", "acks=1", "--record-size", "20"})
	if err != nil {
		t.Fatal(err)
	}
	if s.E2ERateMode() || s.NumRecords != 100 || s.RecordSize != 20 || s.Props["acks"] != "1" || s.Topic != "t" {
		t.Errorf("spec %+v", s)
	}
	if d := DefaultSpec(E2E); d.NumRecords != DefaultE2ERecords || d.Throughput != -1 || d.Topic != "kbench-e2e" {
		t.Errorf("defaults %+v", d)
	}
	tests := []struct {
		args  []string
		field string
		msg   string
	}{
		{[]string{"--duration", "5"}, "duration", "applies to rate mode"},
		{[]string{"--throughput", "100", "--record-size", "10"}, "record-size", "at least 24 bytes in rate mode"},
		{[]string{"--num-records", "0"}, "num-records", "at least 1"},
		{[]string{"--mode", "raw"}, "mode", "must be kafka or rate"},
		{[]string{"--mode", "kafka", "--throughput", "100"}, "throughput", "applies to rate mode (--mode rate)"},
		{[]string{"--mode", "kafka", "--duration", "5"}, "duration", "applies to rate mode"},
		{[]string{"--mode", "rate", "--record-size", "10"}, "record-size", "at least 24 bytes in rate mode"},
		{[]string{"--messages", "5", "--warmup-records", "1"}, "warmup-records", "unknown flag"},
		{[]string{"--backlog-bytes", "1000"}, "backlog-bytes", "applies to rate mode"},
		{[]string{"--throughput", "100", "--backlog-bytes", "-1"}, "backlog-bytes", "must be positive"},
		{[]string{"--throughput", "100", "--num-records", "10", "--backlog-bytes", "1000"}, "backlog-bytes", "is the whole run (10 records of 100 bytes)"},
		{[]string{"--throughput", "100", "--backlog-bytes", "1000", "--backlog-drain-ratio", "1.5"}, "backlog-drain-ratio", "between 0 and 1"},
		{[]string{"--throughput", "100", "--backlog-drain-ratio", "0.5"}, "backlog-drain-ratio", "applies with --backlog-bytes"},
		{[]string{"--subscriptions", "2"}, "subscriptions", "applies to rate mode"},
		{[]string{"--topics", "2"}, "topics", "applies to rate mode"},
		{[]string{"--throughput", "100", "--subscriptions", "2"}, "subscriptions", "needs --topics"},
		{[]string{"--throughput", "100", "--topics", "1", "--consumers-per-subscription", "101"}, "consumers-per-subscription", "between 1 and 100"},
		{[]string{"--topics", "-1"}, "topics", "between 1 and 10000"},
	}
	for _, tt := range tests {
		_, err := ParseArgs(E2E, tt.args)
		var fe FieldErrors
		if !errors.As(err, &fe) || !fe.Has(tt.field) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%q: %v, want %s: …%s…", tt.args, err, tt.field, tt.msg)
		}
	}
	if _, err := ParseArgs(E2E, []string{"--throughput", "100", "--duration", "2"}); err != nil {
		t.Errorf("rate mode with --duration: %v", err)
	}
	// --mode rate with --throughput -1: rate mode, unthrottled (a sweep's
	// maximum); --mode kafka is the default spelled out.
	for _, tt := range []struct {
		args []string
		rate bool
	}{
		{[]string{"--mode", "rate"}, true},
		{[]string{"--mode", "rate", "--throughput", "300", "--duration", "2"}, true},
		{[]string{"--mode", "rate", "--duration", "2"}, true},
		{[]string{"--mode", "kafka"}, false},
		{[]string{"--throughput", "-1"}, false},
	} {
		s, err := ParseArgs(E2E, tt.args)
		if err != nil || s.E2ERateMode() != tt.rate {
			t.Errorf("%q: rate mode %v, err %v; want rate mode %v", tt.args, s.E2ERateMode(), err, tt.rate)
		}
	}
	p, err := SpecFromParams(E2E, map[string]json.RawMessage{"throughput": json.RawMessage("500"), "producer-props": json.RawMessage(`{"linger.ms": 50}`)})
	if err != nil || !p.E2ERateMode() || p.Props["linger.ms"] != "50" {
		t.Errorf("params: %v", err)
	}
}

// TestDrainedBacklog: the drain is done at what the ratio leaves of the
// backlog in records, never under 1,000, as OMB's minimum backlog.
func TestDrainedBacklog(t *testing.T) {
	for _, tt := range []struct {
		bytes int64
		ratio float64
		want  int64
	}{
		{100 << 20, 0, 1000},      // default ratio 1: all but 1,000
		{100 << 20, 1, 1000},      // the same, given
		{100 << 20, 0.5, 524_288}, // half of 1,048,576 records of 100 bytes
		{1 << 20, 0.99, 1000},     // 1% of 10,485 records is under 1,000
	} {
		s := Spec{RecordSize: 100, BacklogBytes: tt.bytes, BacklogDrainRatio: tt.ratio}
		if got := s.DrainedBacklog(); got != tt.want {
			t.Errorf("%d bytes, ratio %v: drained at %d records, want %d", tt.bytes, tt.ratio, got, tt.want)
		}
	}
}

// TestGroups: the subscriptions' groups and members default each other
// to 1, and none are used without either flag.
func TestGroups(t *testing.T) {
	for _, tt := range []struct {
		subs, members int
		wantS, wantM  int
		ok            bool
	}{{0, 0, 0, 0, false}, {2, 0, 2, 1, true}, {0, 3, 1, 3, true}, {2, 3, 2, 3, true}} {
		s := Spec{Subscriptions: tt.subs, ConsumersPerSubscription: tt.members}
		if gs, gm, ok := s.Groups(); gs != tt.wantS || gm != tt.wantM || ok != tt.ok {
			t.Errorf("Groups of %d, %d = %d, %d, %v; want %d, %d, %v", tt.subs, tt.members, gs, gm, ok, tt.wantS, tt.wantM, tt.ok)
		}
	}
}
