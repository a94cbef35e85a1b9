package rundoc

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseSpecFile: a spec file is outside input (`kbench run --spec`).
// Parsing never panics; what it accepts has params; a spec built from an
// accepted file is written and read back the same, and a refusal of its
// params names their fields.
func FuzzParseSpecFile(f *testing.F) {
	for _, seed := range []string{
		`{"workload":"producer","params":{}}`,
		`{"workload":"consumer","params":{"messages":42,"mode":"assign","consumer-props":{"fetch.min.bytes":"2"}}}`,
		`{"workload":"writepath","params":{"duration":1.5,"strategy":"copy","acks":"-1"}}`,
		`{"workload":"producer","params":null}`,
		`{"workload":"producer","parms":{}}`,
		`{"workload":"producer","params":{}} {}`,
		`[{"workload":"producer","params":{}}]`,
		`{"workload":"imported","params":{"throughput":"NaN"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseSpecFile(data)
		if err != nil {
			return
		}
		if file.Params == nil {
			t.Fatalf("accepted %q without params", data)
		}
		for k := range file.Params {
			if strings.HasSuffix(k, ".config") || k == "payload-file" {
				return // they read files
			}
		}
		s, err := SpecFromParams(file.Workload, file.Params)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("refusal without a field: %v", err)
			}
			return
		}
		path := filepath.Join(t.TempDir(), "spec.json")
		if err := WriteSpecFile(path, s); err != nil {
			t.Fatalf("accepted %q but cannot write it: %v", data, err)
		}
		again, err := ReadSpecFile(path, func(string) string { return "" })
		if err != nil {
			t.Fatalf("accepted %q, its written file is refused: %v", data, err)
		}
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("round trip of %q:\n%s\n%s", data, a, b)
		}
	})
}
