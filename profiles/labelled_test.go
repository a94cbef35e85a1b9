package profiles

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
)

// TestMergeLabelled: two processes' profiles merge into one whose
// samples carry each process's labels, and whose total is the sum; a
// filter on one label gives that process's samples back.
func TestMergeLabelled(t *testing.T) {
	fold := func(stacks string) []byte {
		t.Helper()
		p, err := ParseFolded(bytes.NewReader([]byte(stacks)), 0)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := fold("main;send;write 30\nmain;encode 10\n")
	b := fold("main;send;write 50\nmain;send;writev 5\n")
	out, err := MergeLabelled([][]byte{a, b}, []map[string]string{{"worker": "lab-1#7", "shard": "1"}, {"worker": "lab-2#8", "shard": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(out)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int64{}
	for _, s := range p.Sample {
		if len(s.Label["worker"]) != 1 || len(s.Label["shard"]) != 1 {
			t.Fatalf("sample %v has labels %v", s.Location, s.Label)
		}
		by[s.Label["worker"][0]] += s.Value[0]
	}
	if by["lab-1#7"] != 40 || by["lab-2#8"] != 55 {
		t.Errorf("values by worker %v, want 40 and 55", by)
	}
	if _, err := MergeLabelled([][]byte{a}, nil); err == nil {
		t.Error("one profile for no label set merged")
	}
}
