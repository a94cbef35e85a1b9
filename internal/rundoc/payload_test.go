package rundoc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
)

// TestPayloadContentsFlags: --payload takes base64 and makes its length the
// record size, round-tripping through params as base64; the payload and
// key flags are refused, naming themselves, where they do not apply or
// would not fit.
func TestPayloadContentsFlags(t *testing.T) {
	payload := []byte("\x00\x01binary\xffpayload of the workload, 48 bytes long....")
	b64 := base64.StdEncoding.EncodeToString(payload)
	s, err := ParseArgs(E2E, []string{"--mode", "rate", "--payload", b64})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.Payload, payload) || s.RecordSize != len(payload) {
		t.Errorf("payload %q, record size %d", s.Payload, s.RecordSize)
	}
	params, err := s.Params()
	if err != nil {
		t.Fatal(err)
	}
	if string(params["payload"]) != `"`+b64+`"` {
		t.Errorf("params' payload %s, want the base64", params["payload"])
	}
	back, err := SpecFromParams(E2E, params)
	if err != nil || !bytes.Equal(back.Payload, payload) || back.RecordSize != len(payload) {
		t.Errorf("round trip: %q, %d, %v", back.Payload, back.RecordSize, err)
	}
	if _, err := ParseArgs(Producer, []string{"--payload-random-ratio", "0.5", "--payload-pool", "10", "--key-size", "10", "--key-count", "10000", "--key-order", "round-robin"}); err != nil {
		t.Errorf("random payloads and round-robin keys: %v", err)
	}

	for _, tt := range []struct {
		args  []string
		field string
	}{
		{[]string{"--payload", "not base64!"}, "payload"},
		{[]string{"--payload", ""}, "payload"},
		{[]string{"--payload", b64, "--record-size", "10"}, "payload"},
		{[]string{"--payload", b64, "--payload-entropy", "0.5"}, "payload"},
		{[]string{"--payload", b64, "--payload-random-ratio", "0.5"}, "payload"},
		{[]string{"--payload", base64.StdEncoding.EncodeToString(make([]byte, MaxPayloadBytes+1))}, "payload"},
		{[]string{"--payload-random-ratio", "1.5"}, "payload-random-ratio"},
		{[]string{"--payload-random-ratio", "0.5", "--payload-entropy", "0.5"}, "payload-random-ratio"},
		{[]string{"--payload-pool", "10"}, "payload-pool"},
		{[]string{"--payload-random-ratio", "0.5", "--payload-pool", "-1"}, "payload-pool"},
		{[]string{"--payload-random-ratio", "0.5", "--payload-pool", "100000", "--record-size", "10000"}, "payload-pool"},
		{[]string{"--key-count", "10"}, "key-count"},
		{[]string{"--key-order", "round-robin"}, "key-order"},
		{[]string{"--key-size", "8", "--key-order", "sorted"}, "key-order"},
		{[]string{"--key-size", "1000", "--key-count", "1000000"}, "key-count"},
	} {
		_, err := ParseArgs(Producer, tt.args)
		var fes FieldErrors
		if !errors.As(err, &fes) || !fes.Has(tt.field) {
			t.Errorf("ParseArgs(producer, %.60q) = %v, want an error on %s", tt.args, err, tt.field)
		}
	}
	_, err = SpecFromParams(E2E, map[string]json.RawMessage{"payload": json.RawMessage(`{"a": 1}`)})
	var fes FieldErrors
	if !errors.As(err, &fes) || !fes.Has("payload") {
		t.Errorf("payload as an object: %v", err)
	}
}
