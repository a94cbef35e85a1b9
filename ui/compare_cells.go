package ui

import (
	"html/template"
	"strconv"
	"strings"
)

// htmlEscaper escapes text as html/template does in element text and in
// quoted attribute values (its htmlReplacementTable): the cells written
// by cellsHTML must read byte for byte as the template wrote them.
var htmlEscaper = strings.NewReplacer(
	"\x00", "\uFFFD",
	`"`, "&#34;",
	"&", "&amp;",
	"'", "&#39;",
	"+", "&#43;",
	"<", "&lt;",
	">", "&gt;",
)

// cellsHTML writes a row's cells as the comparison-table template did
// cell by cell: each is a new line, six spaces, then
//
//	<td class="num[ missing]"[ title="Note"]><span class="value">Value</span>
//	[ <span class="unit">Unit</span>][<br><span class="Class"[ data-state="State"]
//	[ data-more-repetitions="More"]>Change</span>]</td>
//
// followed, when the column has a Hodges-Lehmann column (HasHL), by
//
//	<td class="num hl">[<span class="Class">HL</span>]</td>
//
// every text escaped. A table of 50 runs × 60 metrics has 3,000 cells;
// through the template each cost about ten reflective field lookups,
// which were most of the page's render time.
func cellsHTML(cells []CompareCell) template.HTML {
	var b strings.Builder
	b.Grow(len(cells) * 160)
	for _, c := range cells {
		b.WriteString("\n      <td class=\"num")
		if c.Missing {
			b.WriteString(" missing")
		}
		b.WriteByte('"')
		if c.Note != "" {
			b.WriteString(` title="`)
			htmlEscaper.WriteString(&b, c.Note)
			b.WriteByte('"')
		}
		b.WriteString(`><span class="value">`)
		htmlEscaper.WriteString(&b, c.Value)
		b.WriteString("</span>")
		if c.Unit != "" {
			b.WriteString(` <span class="unit">`)
			htmlEscaper.WriteString(&b, c.Unit)
			b.WriteString("</span>")
		}
		if c.Change != "" {
			b.WriteString(`<br><span class="`)
			htmlEscaper.WriteString(&b, c.Class)
			b.WriteByte('"')
			if c.State != "" {
				b.WriteString(` data-state="`)
				htmlEscaper.WriteString(&b, c.State)
				b.WriteByte('"')
			}
			if c.More != 0 {
				b.WriteString(` data-more-repetitions="`)
				b.WriteString(strconv.Itoa(c.More))
				b.WriteByte('"')
			}
			b.WriteByte('>')
			htmlEscaper.WriteString(&b, c.Change)
			b.WriteString("</span>")
		}
		b.WriteString("</td>")
		if c.HasHL {
			b.WriteString("\n      <td class=\"num hl\">")
			if c.HL != "" {
				b.WriteString(`<span class="`)
				htmlEscaper.WriteString(&b, c.Class)
				b.WriteString(`">`)
				htmlEscaper.WriteString(&b, c.HL)
				b.WriteString("</span>")
			}
			b.WriteString("</td>")
		}
	}
	return template.HTML(b.String()) // #nosec G203 -- every text above is escaped by htmlEscaper
}
