package profiles

import (
	"bytes"
	"runtime/pprof"
	"testing"
)

func TestSummarizeHeapProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.SampleTypes) != 4 || s.SampleTypes[0] != "alloc_objects/count" {
		t.Errorf("sample types = %v, want the heap profile's four", s.SampleTypes)
	}
}

func TestSummarizeRejectsGarbage(t *testing.T) {
	if _, err := Summarize([]byte("not a profile")); err == nil {
		t.Error("garbage accepted as a profile")
	}
}
