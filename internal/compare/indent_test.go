package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// indentCases are compact JSON documents with what indentJSON must get
// right: empty and nested containers, and strings holding quotes,
// backslashes, brackets, commas and colons.
var indentCases = []string{
	`{}` + "\n",
	`[]`,
	`{"a":[],"b":{},"c":[{}],"d":[[]]}` + "\n",
	`{"s":"a \"quoted\" {x:[1,2]}, y\\","t":"\\\\","u":"\u00e9 ✓ \\u2028"}` + "\n",
	`[1,-2.5e-7,true,false,null,"",{"k":[1,{"v":"]}"}]}]` + "\n",
	`"just a string"`,
	`42`,
}

// checkIndent fails t unless indentJSON gives what json.Indent gives.
func checkIndent(t *testing.T, compact []byte) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Indent(&want, compact, "", "  "); err != nil {
		t.Fatalf("json.Indent(%q): %v", compact, err)
	}
	if got := indentJSON(nil, compact); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("indentJSON(%q):\n%s\njson.Indent:\n%s", compact, got, want.Bytes())
	}
}

func TestIndentJSON(t *testing.T) {
	for _, c := range indentCases {
		checkIndent(t, []byte(c))
	}
	// The golden JSON exports, compacted again.
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	more, err2 := filepath.Glob(filepath.Join("..", "..", "server", "testdata", "*.json"))
	files = append(files, more...)
	if err != nil || err2 != nil || len(files) == 0 {
		t.Fatalf("no JSON exports to check (%v, %v)", err, err2)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		compact.WriteByte('\n')
		checkIndent(t, compact.Bytes())
	}
}

// FuzzIndentJSON: for any valid JSON, compacted as encoding/json writes
// it, indentJSON gives json.Indent's bytes.
func FuzzIndentJSON(f *testing.F) {
	for _, c := range indentCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, b) != nil {
			return
		}
		checkIndent(t, compact.Bytes())
	})
}
