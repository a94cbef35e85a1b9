package rundoc

import (
	"encoding/json"
	"testing"
)

// TestClusterFingerprint: on a named cluster the series follows the name:
// its servers and connection properties (merged in when the run starts)
// do not change the fingerprint, its other properties do, and the name
// survives Params and SpecFromParams.
func TestClusterFingerprint(t *testing.T) {
	base := DefaultSpec(Producer)
	base.Cluster = "lab"
	stored, err := base.Fingerprint()
	if err != nil {
		t.Fatal(err)
	}
	merged := base
	merged.Props = map[string]string{"bootstrap.servers": "k1:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": `x required password="p";`, "ssl.truststore.location": "/ca.pem"}
	moved := merged
	moved.Props = map[string]string{"bootstrap.servers": "k9:9092"}
	for name, s := range map[string]Spec{"merged": merged, "moved": moved} {
		if fp, _ := s.Fingerprint(); fp != stored {
			t.Errorf("%s: fingerprint %s, want the stored spec's %s", name, fp, stored)
		}
	}
	other := base
	other.Cluster = "prod"
	tuned := base
	tuned.Props = map[string]string{"acks": "1"}
	plain := base
	plain.Cluster = ""
	for name, s := range map[string]Spec{"another cluster": other, "own acks": tuned, "no cluster": plain} {
		if fp, _ := s.Fingerprint(); fp == stored {
			t.Errorf("%s: same fingerprint as the cluster's", name)
		}
	}
	params, err := base.Params()
	if err != nil {
		t.Fatal(err)
	}
	back, err := SpecFromParams(Producer, params)
	if err != nil || back.Cluster != "lab" {
		t.Errorf("round trip: %q %v", back.Cluster, err)
	}
	params["cluster"] = json.RawMessage(`"a b"`)
	if _, err := SpecFromParams(Producer, params); err == nil {
		t.Errorf("a bad cluster name was taken")
	}
}
