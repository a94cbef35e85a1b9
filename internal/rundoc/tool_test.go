package rundoc

import (
	"encoding/json"
	"testing"
)

// TestToolParam: a spec's tool survives Params and SpecFromParams, takes
// part in the fingerprint (a Kafka tool's runs are not kbench's), and a
// name that is not one word is refused under "tool".
func TestToolParam(t *testing.T) {
	base := DefaultSpec(Producer)
	base.Tool = "java-producer"
	params, err := base.Params()
	if err != nil {
		t.Fatal(err)
	}
	back, err := SpecFromParams(Producer, params)
	if err != nil || back.Tool != "java-producer" {
		t.Fatalf("round trip: %q %v", back.Tool, err)
	}
	withTool, _ := base.Fingerprint()
	plain := base
	plain.Tool = ""
	if fp, _ := plain.Fingerprint(); fp == withTool {
		t.Errorf("a tool's run has the fingerprint of kbench's own")
	}
	for _, bad := range []string{`"../bin/sh"`, `"a b"`, `""`, `7`} {
		params["tool"] = json.RawMessage(bad)
		_, err := SpecFromParams(Producer, params)
		var fes FieldErrors
		if !asFieldErrors(err, &fes) || !fes.Has("tool") {
			t.Errorf("tool %s: %v, want an error on tool", bad, err)
		}
	}
}

func asFieldErrors(err error, fes *FieldErrors) bool {
	if err == nil {
		return false
	}
	e, ok := err.(FieldErrors)
	*fes = e
	return ok
}
