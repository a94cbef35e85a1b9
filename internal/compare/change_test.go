package compare

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestChangeColumns: a before/after comparison splits the runs, in their
// order, at the first run after the change point.
func TestChangeColumns(t *testing.T) {
	var runs []rundoc.Run
	for _, id := range []uint{11, 12, 13, 21, 22} {
		runs = append(runs, rundoc.Run{ID: id, Label: "perf"})
	}
	tests := []struct {
		at   uint
		want []string
	}{
		{21, []string{"before #21=11,12,13", "from #21=21,22"}},
		{12, []string{"before #12=11", "from #12=12,13,21,22"}},
		{11, []string{"from #11=11,12,13,21,22"}},
		{99, []string{"before #99=11,12,13,21,22"}},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range ChangeColumns(runs, tt.at) {
			var ids []string
			for _, r := range c.Runs {
				ids = append(ids, strconv.FormatUint(uint64(r.ID), 10))
			}
			got = append(got, c.Name+"="+strings.Join(ids, ","))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ChangeColumns(at %d) = %q, want %q", tt.at, got, tt.want)
		}
	}
}
