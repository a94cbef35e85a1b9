package compare

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// batched is a measured run of group g queued in A/B batch b ("" for none).
func batched(id uint, label, b string) rundoc.Run {
	r := run(id, label, metric("record-send-rate", float64(1000+id), "records/s", HigherIsBetter))
	r.GroupID, r.ABBatch = "g-"+label, b
	return r
}

// TestNotInterleaved: a comparison names the columns whose repetitions
// were not queued interleaved with the baseline's, and the runs that ran
// apart, in its notes, its JSON and its Markdown.
func TestNotInterleaved(t *testing.T) {
	warm := batched(90, "A", "")
	warm.Warmup = true
	tests := []struct {
		name  string
		runs  []rundoc.Run
		want  []string // columns flagged
		apart string   // runs named in the note, "" when all ran apart
	}{
		{"one batch", []rundoc.Run{batched(1, "A", "b1"), batched(2, "B", "b1"), batched(3, "B", "b1"), batched(4, "A", "b1")}, nil, ""},
		{"one after another", []rundoc.Run{batched(1, "A", ""), batched(2, "A", ""), batched(3, "B", ""), batched(4, "B", "")},
			[]string{"B"}, ""},
		{"two batches on both sides", []rundoc.Run{batched(1, "A", "b1"), batched(2, "B", "b1"), batched(3, "B", "b2"), batched(4, "A", "b2")}, nil, ""},
		{"a batch on one side only", []rundoc.Run{batched(1, "A", "b1"), batched(2, "B", "b1"), batched(3, "B", "b1"), batched(4, "A", "b1"),
			batched(5, "A", "b2"), batched(6, "A", "b2")}, []string{"B"}, "#5, #6"},
		{"two separate A/B batches", []rundoc.Run{batched(1, "A", "b1"), batched(2, "A", "b1"), batched(3, "B", "b2"), batched(4, "B", "b2")},
			[]string{"B"}, ""},
		{"warm-up runs do not count", []rundoc.Run{warm, batched(1, "A", "b1"), batched(2, "B", "b1"), batched(3, "B", "b1"), batched(4, "A", "b1")}, nil, ""},
		{"third column apart", []rundoc.Run{batched(1, "A", "b1"), batched(2, "B", "b1"), batched(3, "B", "b1"), batched(4, "A", "b1"),
			batched(5, "C", "b2"), batched(6, "C", "b2")}, []string{"C"}, ""},
		{"single runs are not checked", []rundoc.Run{batched(1, "A", ""), batched(2, "B", "")}, nil, ""},
		{"a single run against a group is not checked", []rundoc.Run{batched(1, "A", ""), batched(2, "B", ""), batched(3, "B", "")}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Build(Columns(tt.runs, ByLabel), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tab.NotInterleaved, tt.want) {
				t.Errorf("NotInterleaved %q, want %q", tab.NotInterleaved, tt.want)
			}
			var note string
			for _, n := range tab.Notes {
				if strings.Contains(n, "interleaved") && strings.Contains(n, "baseline") {
					note = n
				}
			}
			if (note != "") != (tt.want != nil) {
				t.Fatalf("note %q, want one only when a column is flagged; notes %q", note, tab.Notes)
			}
			if note == "" {
				return
			}
			want := []string{tt.want[0] + " and the baseline A ran one after another, not interleaved: ", "machine drift"}
			if tt.apart != "" {
				want[0] = tt.want[0] + " and the baseline A were not all interleaved (runs that ran apart: " + tt.apart + "): "
			}
			for _, w := range want {
				if !strings.Contains(note, w) {
					t.Errorf("note %q does not say %q", note, w)
				}
			}
			var doc struct {
				NotInterleaved []string `json:"not_interleaved"`
				TableNotes     []string `json:"table_notes"`
			}
			data, err := JSON(tab, Meta{})
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(doc.NotInterleaved, tt.want) || !slices.Contains(doc.TableNotes, note) {
				t.Errorf("JSON not_interleaved %q notes %q", doc.NotInterleaved, doc.TableNotes)
			}
			if md := Markdown(tab, Meta{}); !strings.Contains(md, escapeInline(note)) {
				t.Errorf("Markdown lacks the note %q", note)
			}
		})
	}
}
