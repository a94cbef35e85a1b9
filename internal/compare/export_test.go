package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

var reportMeta = Meta{
	Title:   "Consumer: CLASSIC vs CONSUMER protocol",
	Notes:   "Six runs per side, interleaved.\nBroker: embedded kfake, loopback.",
	URL:     "https://kbench.example/r/Zm9vYmFyYmF6cXV4",
	Created: t0,
}

func groupsTable(t testing.TB) *Table {
	tab, err := Build(Columns(groupRuns(), ByLabel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func singlesTable(t testing.TB, opts Options) *Table {
	tab, err := Build(Columns(singleRuns(), ByRun), opts)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestGolden(t *testing.T) {
	tables := []struct {
		name string
		tab  *Table
		meta Meta
	}{
		{"groups", groupsTable(t), reportMeta},
		{"singles", singlesTable(t, Options{}), Meta{Title: "Producer | trunk vs branch", Created: t0}},
		{"singles-hidden", singlesTable(t, Options{HideUnchanged: true}), Meta{}},
	}
	for _, tt := range tables {
		t.Run(tt.name, func(t *testing.T) {
			md := Markdown(tt.tab, tt.meta)
			golden.Check(t, tt.name+".md", md)
			golden.Check(t, tt.name+".csv", string(CSV(tt.tab)))
			js, err := JSON(tt.tab, tt.meta)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+".json", string(js))
		})
	}
}

// TestDeterministicConcurrent builds and exports the same runs from many
// goroutines (run with -race): every export is byte-identical, and the
// runs' metrics are left as they were (benchmath sorts in place).
func TestDeterministicConcurrent(t *testing.T) {
	runs := groupRuns()
	before := fmt.Sprint(runs)
	export := func() (string, error) {
		tab, err := Build(Columns(runs, ByLabel), Options{})
		if err != nil {
			return "", err
		}
		js, err := JSON(tab, reportMeta)
		return Markdown(tab, reportMeta) + string(CSV(tab)) + string(js), err
	}
	want, err := export()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := export()
			if err == nil && got != want {
				err = errors.New("exports differ between builds of the same runs")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if fmt.Sprint(runs) != before {
		t.Error("Build changed its input runs")
	}
}

func TestCSVShape(t *testing.T) {
	tab := groupsTable(t)
	recs, err := csv.NewReader(bytes.NewReader(CSV(tab))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := len(tab.Rows)*len(tab.Columns) + 1; len(recs) != want {
		t.Fatalf("%d records, want %d (header + metrics × columns)", len(recs), want)
	}
	// The columns before issue 11's come first, unchanged.
	if got := strings.Join(recs[0], ","); got != "section,metric,unit,better,column,n,value,lo,hi,median_change_pct,p_value,verdict,test,"+
		"headline,p_adjusted,hl_change_pct,hl_ci_low,hl_ci_high,state,more_repetitions,fdr_q" {
		t.Errorf("header = %q", got)
	}
	if got := csvText("=SUM(A1)"); got != "'=SUM(A1)" {
		t.Errorf("csvText(formula) = %q", got)
	}
}

func TestJSONShape(t *testing.T) {
	js, err := JSON(groupsTable(t), reportMeta)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Title   string
		Created string
		Columns []struct {
			Name            string
			Runs            []uint
			WarmupsExcluded []uint `json:"warmups_excluded"`
		}
		Rows []struct {
			Metric string
			Cells  []struct {
				N       int
				Value   *float64
				P       *float64 `json:"p_value"`
				Verdict string
				Test    string
			}
		}
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Title != reportMeta.Title || doc.Created != "2026-03-01T12:00:00Z" || len(doc.Columns) != 3 || len(doc.Columns[0].WarmupsExcluded) != 1 {
		t.Errorf("doc = %+v", doc)
	}
	if c := doc.Rows[1].Cells[1]; doc.Rows[1].Metric != "records-consumed-rate" || c.N != 6 || c.Value == nil || c.P == nil || c.Verdict != VerdictBetter || c.Test != TestSignificant {
		t.Errorf("second row = %+v", doc.Rows[1])
	}
}

func TestMarkdownEscaping(t *testing.T) {
	r1 := run(1, "trunk|main", metric("m", 1, "ms|s", LowerIsBetter))
	r1.Output = "plain line\n"
	r2 := run(2, "br`anch` <x> & co", metric("m", 2, "ms|s", LowerIsBetter))
	r2.Output = "a ``` fence\r\n````\nlast\n\n"
	tab, err := Build(Columns([]rundoc.Run{r1, r2}, ByRun), Options{Headline: []string{"m"}})
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(tab, Meta{Title: "a `b` | c"})
	for _, want := range []string{
		"## a \\`b\\` \\| c\n",
		"| Metric | #1 trunk\\|main · baseline | #2 br\\`anch\\` \\<x\\> \\& co |\n",
		"| **m** (ms\\|s) ↓ | 1 | 2 (+100% ✗?) |\n", // a tested (headline) row is bold
		"<details><summary>#2 br`anch` &lt;x&gt; &amp; co</summary>\n\n`````text\na ``` fence\n````\nlast\n`````\n\n</details>\n",
		"<details><summary>#1 trunk|main</summary>\n\n```text\nplain line\n```\n\n</details>\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	// Every table line has as many unescaped pipes as the header.
	var pipes int
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		n := strings.Count(line, "|") - strings.Count(line, `\|`)
		if pipes == 0 {
			pipes = n
		} else if n != pipes {
			t.Errorf("line %q has %d cell separators, want %d", line, n, pipes)
		}
	}
}

func TestMarkdownEmpty(t *testing.T) {
	tab, err := Build([]Column{{Name: "a", Runs: []rundoc.Run{run(1, "a")}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(tab, Meta{})
	if !strings.HasPrefix(md, "## kbench comparison\n") || !strings.Contains(md, "No metrics to show.") || strings.Contains(md, "<details>") {
		t.Errorf("Markdown of an empty table:\n%s", md)
	}
}
