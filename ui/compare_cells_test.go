package ui

import (
	"html/template"
	"strings"
	"testing"
)

// cellTemplate is the comparison table's cell as the template wrote it
// before cellsHTML: cellsHTML must write the same bytes.
const cellTemplate = `{{- range .}}
      <td class="num{{if .Missing}} missing{{end}}"{{if .Note}} title="{{.Note}}"{{end}}><span class="value">{{.Value}}</span>{{if .Unit}} <span class="unit">{{.Unit}}</span>{{end}}{{if .Change}}<br><span class="{{.Class}}"{{if .State}} data-state="{{.State}}"{{end}}{{if .More}} data-more-repetitions="{{.More}}"{{end}}>{{.Change}}</span>{{end}}</td>
      {{- if .HasHL}}
      <td class="num hl">{{if .HL}}<span class="{{.Class}}">{{.HL}}</span>{{end}}</td>
      {{- end}}
      {{- end}}`

func TestCellsHTMLMatchesTemplate(t *testing.T) {
	nasty := "a<b>&c\"d'e+f\x00g \xff ±2.3% — ✓ <script>"
	cases := map[string][]CompareCell{
		"empty":    nil,
		"baseline": {{Value: "1,234,567", Unit: "records/s", N: 3}},
		"missing":  {{Value: "—", Missing: true, Note: "no run of this column has it"}},
		"change": {
			{Value: "4.12 ±2.3%", Unit: "ms", N: 5},
			{Value: "4.50", Unit: "ms", N: 5, Change: "+9.2% [+1.1%, +15.9%] ✗", Class: "delta delta-worse", State: "significant", HasHL: true, HL: "+9.1% [+1.0%, +15.2%] adj. p=0.002"},
			{Value: "4.00", Unit: "ms", N: 2, Change: "−2.9% ~", Class: "delta delta-borderline", State: "borderline", More: 7, Note: "few samples; outliers", HasHL: true},
		},
		"escaped": {{Value: nasty, Unit: nasty, Note: nasty, Change: nasty, Class: nasty, State: nasty, More: -3, HasHL: true, HL: nasty}},
	}
	tmpl := template.Must(template.New("cells").Parse(cellTemplate))
	for name, cells := range cases {
		t.Run(name, func(t *testing.T) {
			var want strings.Builder
			if err := tmpl.Execute(&want, cells); err != nil {
				t.Fatal(err)
			}
			if got := string(cellsHTML(cells)); got != want.String() {
				t.Errorf("cellsHTML:\n%q\nthe template:\n%q", got, want.String())
			}
		})
	}
}
