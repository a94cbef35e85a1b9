package jfr

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// benchInput is testdata/gather.json's events repeated to n events: the
// JSON of a longer recording.
func benchInput(b *testing.B, n int) []byte {
	data, err := os.ReadFile(filepath.Join("testdata", "gather.json"))
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Recording struct {
			Events []json.RawMessage `json:"events"`
		} `json:"recording"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"recording": {"events": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.Write(doc.Recording.Events[i%len(doc.Recording.Events)])
	}
	buf.WriteString("]}}\n")
	return buf.Bytes()
}

// BenchmarkConvert streams 5,000 events (a minute of a busy two-thread
// JVM at JFR's profile settings) through Convert.
func BenchmarkConvert(b *testing.B) {
	in := benchInput(b, 5000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Convert(bytes.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalWhole is the peer Convert is measured against: the
// same events decoded as one document into the same structs, no profile
// built (what a converter without streaming would at least do).
func BenchmarkUnmarshalWhole(b *testing.B) {
	in := benchInput(b, 5000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var doc struct {
			Recording struct {
				Events []event `json:"events"`
			} `json:"recording"`
		}
		if err := json.Unmarshal(in, &doc); err != nil {
			b.Fatal(err)
		}
	}
}
