package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckJSONBody: whatever checkJSONBody accepts is one valid JSON
// object that encoding/json decodes without replacing anything; bodies
// that are not valid UTF-8 are always refused, with a field named.
func FuzzCheckJSONBody(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":"\ud83d\ude00"}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `{"a":[{"b":"c"}]} x`,
		`[1]`, `{"a":1,"a":2}`, `{"a":{"b":[1,2,{"c":"\\u00e9"}]}}`, `{}{}`, ` {"k":"\ufffd"} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkJSONBody(body)
		if err != nil {
			status, field, _ := classify(err)
			if status != 400 || field == "" {
				t.Fatalf("refusal %v: status %d, field %q", err, status, field)
			}
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("accepted invalid UTF-8: %q", body)
		}
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&v); err != nil || dec.More() {
			t.Fatalf("accepted %q, which does not decode as one object: %v", body, err)
		}
		// No replacement character appears that the body did not spell.
		spelt := bytes.Count(body, []byte("\ufffd")) + strings.Count(strings.ToLower(string(body)), `\ufffd`)
		if got := countReplacements(v); got > spelt {
			t.Fatalf("accepted %q: decoding made %d U+FFFD, the body spelt %d", body, got, spelt)
		}
	})
}

func countReplacements(v any) int {
	switch v := v.(type) {
	case string:
		return strings.Count(v, "\ufffd")
	case []any:
		n := 0
		for _, e := range v {
			n += countReplacements(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			n += strings.Count(k, "\ufffd") + countReplacements(e)
		}
		return n
	}
	return 0
}
