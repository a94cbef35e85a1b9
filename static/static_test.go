package static

import (
	"io/fs"
	"strings"
	"testing"
)

// TestOneFormatterNoClientCharts: the scripts format numbers only through
// format.js (which TestE2EFormatMatchesGo holds to the Go formatter), and
// draw no charts of their own: line charts come from the server
// (ui.LineChart), the live ones too.
func TestOneFormatterNoClientCharts(t *testing.T) {
	formatting := []string{"toFixed(", "toPrecision(", "toExponential(", "toLocaleString(", "Intl.NumberFormat"}
	charting := []string{"<svg", "polyline", "createElementNS"}
	scripts, err := fs.Glob(FS, "*.js")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, name := range scripts {
		data, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		src := string(data)
		if name != "format.js" {
			for _, f := range formatting {
				if strings.Contains(src, f) {
					t.Errorf("%s formats numbers itself (%s): use window.kbenchFormat from format.js", name, f)
				}
			}
		}
		for _, c := range charting {
			if strings.Contains(src, c) {
				t.Errorf("%s draws SVG (%s): charts are the server's (ui.LineChart)", name, c)
			}
		}
	}
}
