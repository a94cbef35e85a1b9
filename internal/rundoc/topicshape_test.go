package rundoc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestTopicShapeFlags: --topic-config takes k=v pairs on the command
// line and an object in params, into its own map (not the client's
// properties); it and --replication-factor need --topics, and are
// refused with the field named otherwise.
func TestTopicShapeFlags(t *testing.T) {
	s, err := ParseArgs(E2E, []string{"--topics", "2", "--mode", "rate", "--topic-config", "min.insync.replicas=2", "retention.ms=60000",
		"--replication-factor", "3", "--producer-props", "acks=all"})
	if err != nil {
		t.Fatal(err)
	}
	if s.TopicConfig["min.insync.replicas"] != "2" || s.TopicConfig["retention.ms"] != "60000" || s.ReplicationFactor != 3 {
		t.Errorf("topic-config %v, replication-factor %d", s.TopicConfig, s.ReplicationFactor)
	}
	if _, ok := s.Props["min.insync.replicas"]; ok || s.Props["acks"] != "all" {
		t.Errorf("props %v: the topic's configs went to the client", s.Props)
	}
	if s.EmbeddedBrokers() != 3 {
		t.Errorf("EmbeddedBrokers = %d, want 3", s.EmbeddedBrokers())
	}
	params, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	back, err := SpecFromParams(E2E, params)
	if err != nil {
		t.Fatalf("params of the spec: %v", err)
	}
	if back.TopicConfig["retention.ms"] != "60000" || back.ReplicationFactor != 3 {
		t.Errorf("round trip: %v, %d", back.TopicConfig, back.ReplicationFactor)
	}

	for _, tt := range []struct {
		params map[string]string
		field  string
	}{
		{map[string]string{"topic-config": `{"min.insync.replicas": 2}`}, "topic-config"},
		{map[string]string{"replication-factor": `3`}, "replication-factor"},
		{map[string]string{"topics": `1`, "replication-factor": `0.5`}, "replication-factor"},
		{map[string]string{"topics": `1`, "replication-factor": `17`}, "replication-factor"},
		{map[string]string{"topics": `1`, "replication-factor": `-1`}, "replication-factor"},
		{map[string]string{"topics": `1`, "topic-config": `{"bad key": "1"}`}, "topic-config"},
		{map[string]string{"topics": `1`, "topic-config": `{"k": "line\nbreak"}`}, "topic-config"},
		{map[string]string{"topics": `1`, "topic-config": `"novalue"`}, "topic-config"},
	} {
		raw := map[string]json.RawMessage{}
		for k, v := range tt.params {
			raw[k] = json.RawMessage(v)
		}
		_, err := SpecFromParams(Producer, raw)
		var fes FieldErrors
		if !errors.As(err, &fes) || !fes.Has(tt.field) {
			t.Errorf("%v: %v, want an error on %s", tt.params, err, tt.field)
		}
	}
	if _, err := ParseArgs(Producer, []string{"--topics", "1", "--topic-config"}); err == nil || !strings.Contains(err.Error(), "topic-config") {
		t.Errorf("--topic-config without pairs: %v", err)
	}
}
