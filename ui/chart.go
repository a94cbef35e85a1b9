package ui

import (
	"cmp"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/numfmt"
)

// Chart is a line chart of one or more series sharing both axes.
type Chart struct {
	Title  string
	XLabel string // e.g. "seconds into the measured window"
	YLabel string // e.g. "throughput"
	Unit   string // unit of the Y values, e.g. "records/s"
	Series []ChartSeries
	// Width and Height are the SVG's size in pixels; zero picks
	// DefaultChartWidth × DefaultChartHeight. The SVG scales down with CSS.
	Width, Height int
	// Empty is what the chart says when it has no point to draw; ""
	// says "no interval data".
	Empty string
	// Marks are vertical lines across the plot at X values (a history's
	// change points and environment changes), drawn over the series.
	// Their labels are laid out in lanes above the plot, as many as it
	// takes for no two labels to overlap.
	Marks []ChartMark
	// XTicks, when set, are the X axis' ticks and their labels (times,
	// commits) instead of numbers at 1, 2 or 5 × 10ⁿ steps; those outside
	// the data's range are left out.
	XTicks []ChartTick
	// LogY draws the Y axis on a log scale (latencies that span decades:
	// a sweep's p50 to p99.9 from 10% to 110% load), with ticks at powers
	// of ten, and 2 and 5 times them when the data spans few decades.
	// Points whose Y is not positive cannot be drawn on it and are
	// skipped, as non-finite ones are.
	LogY bool
	// Selectable gives the SVG the X axis' range and the plot's bounds
	// (data-x-lo, data-x-hi, data-plot-left, data-plot-right,
	// data-plot-top, data-plot-bottom, in SVG units), so a page's script
	// can turn a drag over the plot into an X range: the run page's
	// interval charts select profile windows that way.
	Selectable bool
}

// ChartSeries is one line. X and Y pair up by index; extra values of the
// longer slice and non-finite points are skipped.
type ChartSeries struct {
	Name string
	X, Y []float64
	// Links, when set, draws every point as a dot that links to
	// Links[i] ("" for none), with Tips[i] as its tooltip: a history's
	// points lead to their runs.
	Links, Tips []string
	// Group, when set, is what the legend names the line by: lines of
	// one Group share a colour and one legend entry (a report's runs of
	// one configuration), and Name stays the line's tooltip. "" gives
	// the line an entry of its own, named Name.
	Group string
}

// ChartMark is a vertical line across the plot at X, with a short Label
// at its top and Title as its tooltip, linking to Href when set. Class
// (CSS) says what kind of mark it is and colours it.
type ChartMark struct {
	X                         float64
	Label, Title, Href, Class string
}

// ChartTick is a labelled tick of an axis.
type ChartTick struct {
	X     float64
	Label string
}

// Default chart size.
const (
	DefaultChartWidth  = 640
	DefaultChartHeight = 260
)

// seriesStyles are the lines' colours (Okabe–Ito hues, darkened where
// needed for contrast on white) and dash patterns, so series differ for
// readers who cannot tell the colours apart.
var seriesStyles = []struct{ color, dash string }{
	{"#0072b2", ""},
	{"#c44e00", "7 3"},
	{"#007a5a", "2 3"},
	{"#a23b72", "9 3 2 3"},
	{"#8a6d00", "4 4"},
	{"#333333", "1 2"},
}

// Chart geometry, in SVG user units.
const (
	chartMarginLeft   = 72
	chartMarginRight  = 20
	chartMarginTop    = 52
	chartMarginBottom = 46
	chartMaxTicks     = 6
	chartMarkRow      = 16
)

type chartPoint struct{ x, y float64 }

// Legend geometry: the first row's line is at legendRowY, each further
// row legendRowHeight lower; an entry's width is estimated from its
// characters (SVG text cannot be measured on the server).
const (
	legendRowY      = 36
	legendRowHeight = 18
	legendCharWidth = 7.5
)

// legendLayout places the legend's entries left to right from left,
// starting a new row when an entry would pass right, and returns each
// entry's position (its line's left end and height). An entry wider
// than the whole row gets a row of its own.
func legendLayout(names []string, left, right float64) []chartPoint {
	pos := make([]chartPoint, len(names))
	x, y := left, float64(legendRowY)
	for i, name := range names {
		wd := 28 + legendCharWidth*float64(len([]rune(name)))
		if x > left && x+wd > right {
			x, y = left, y+legendRowHeight
		}
		pos[i] = chartPoint{x, y}
		x += wd + 20
	}
	return pos
}

// LineChart renders c as an inline SVG element (no external references,
// no scripts, no style attributes: it is safe under a strict CSP). All
// text is escaped. The output depends only on c.
func LineChart(c Chart) template.HTML {
	w, h := c.Width, c.Height
	if w <= 0 {
		w = DefaultChartWidth
	}
	if h <= 0 {
		h = DefaultChartHeight
	}
	// Keep a usable plot area whatever size is asked for.
	w = max(w, chartMarginLeft+chartMarginRight+100)
	h = max(h, chartMarginTop+chartMarkRow+chartMarginBottom+60)

	type line struct {
		name        string
		style       int // index into seriesStyles: one per legend entry
		pts         []chartPoint
		links, tips []string // per point, when the series has links
	}
	// Legend entries, in first-seen order: a Group's lines share one.
	var legend []string
	entry := map[string]int{}
	var lines []line
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		n := min(len(s.X), len(s.Y))
		var l line
		for i := 0; i < n; i++ {
			x, y := s.X[i], s.Y[i]
			if !finite(x) || !finite(y) || (c.LogY && y <= 0) {
				continue
			}
			l.pts = append(l.pts, chartPoint{x, y})
			if s.Links != nil {
				l.links = append(l.links, at(s.Links, i))
				l.tips = append(l.tips, at(s.Tips, i))
			}
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
		}
		if len(l.pts) > 0 {
			l.name = s.Name
			key, label := "s\x00"+strconv.Itoa(len(lines)), s.Name
			if s.Group != "" {
				key, label = "g\x00"+s.Group, s.Group
			}
			i, ok := entry[key]
			if !ok {
				i = len(legend)
				entry[key] = i
				legend = append(legend, label)
			}
			l.style = i
			lines = append(lines, l)
		}
	}

	yTitle := c.YLabel
	switch {
	case yTitle == "":
		yTitle = c.Unit
	case c.Unit != "":
		yTitle += " (" + c.Unit + ")"
	}

	var b strings.Builder
	left, top := float64(chartMarginLeft), float64(chartMarginTop)
	right, bottom := float64(w-chartMarginRight), float64(h-chartMarginBottom)
	// The legend wraps onto as many rows as it needs within the chart's
	// width; the plot starts below its last row.
	// A name longer than a whole row is cut to fit, with an ellipsis.
	maxChars := max(4, int((right-left-28)/legendCharWidth))
	for i, name := range legend {
		if r := []rune(name); len(r) > maxChars {
			legend[i] = string(r[:maxChars-1]) + "…"
		}
	}
	legendPos := legendLayout(legend, left, right)
	if n := len(legendPos); n > 0 {
		top += legendPos[n-1].y - legendRowY
	}
	// The marks' labels go between the legend and the plot, in lanes;
	// the plot's height leaves room for them.
	xt := dataAxis(xmin, xmax)
	if len(lines) == 0 {
		xt = axis{lo: 0, hi: 1}
	}
	px := func(x float64) float64 { return left + (x-xt.lo)/(xt.hi-xt.lo)*(right-left) }
	lanes := markLanes(c.Marks, xt, px)
	nLanes := 0
	for _, l := range lanes {
		nLanes = max(nLanes, l+1)
	}
	if len(c.Marks) > 0 {
		top += chartMarkRow * float64(max(nLanes, 1))
	}
	// Keep a usable plot however many legend rows and label lanes there are.
	if extra := top + 60 - bottom; extra > 0 {
		h += int(math.Ceil(extra))
		bottom += math.Ceil(extra)
	}

	b.WriteString(`<svg class="chart" viewBox="0 0 ` + itoa(w) + ` ` + itoa(h) + `" width="` + itoa(w) + `" height="` + itoa(h) + `" role="img" aria-label="` + esc(c.Title) + `"`)
	if c.Selectable {
		b.WriteString(` data-x-lo="` + strconv.FormatFloat(xt.lo, 'g', -1, 64) + `" data-x-hi="` + strconv.FormatFloat(xt.hi, 'g', -1, 64) + `" data-plot-left="` + ftoa(left) + `" data-plot-right="` + ftoa(right) +
			`" data-plot-top="` + ftoa(top) + `" data-plot-bottom="` + ftoa(bottom) + `"`)
	}
	b.WriteString(`>`)
	b.WriteString(`<title>` + esc(c.Title) + `</title>`)
	b.WriteString(`<rect class="chart-bg" x="0" y="0" width="` + itoa(w) + `" height="` + itoa(h) + `" fill="#ffffff"/>`)
	b.WriteString(`<text class="chart-title" x="` + itoa(chartMarginLeft) + `" y="20" font-size="15" font-weight="600" fill="#1b1f24">` + esc(c.Title) + `</text>`)
	if c.Selectable && len(lines) > 0 {
		// The selection's band, under the lines: the page's script only
		// moves it and shows it (the charts are drawn here, not there).
		b.WriteString(`<rect class="window-band" x="` + ftoa(left) + `" y="` + ftoa(top) + `" width="0" height="` + ftoa(bottom-top) + `" fill="#0072b2" fill-opacity="0.15" visibility="hidden"/>`)
	}

	if len(lines) == 0 {
		empty := c.Empty
		if empty == "" {
			empty = "no interval data"
		}
		b.WriteString(`<desc>` + esc(capitalize(empty)) + `.</desc>`)
		b.WriteString(`<rect class="chart-frame" x="` + ftoa(left) + `" y="` + ftoa(top) + `" width="` + ftoa(right-left) + `" height="` + ftoa(bottom-top) + `" fill="none" stroke="#c9ced6" stroke-dasharray="4 4"/>`)
		b.WriteString(`<text class="chart-empty" x="` + ftoa((left+right)/2) + `" y="` + ftoa((top+bottom)/2) + `" text-anchor="middle" dominant-baseline="middle" font-size="13" fill="#4a5160">` + esc(empty) + `</text>`)
		b.WriteString(`</svg>`)
		return template.HTML(b.String())
	}

	if c.XTicks != nil {
		xt.ticks, xt.labels = nil, nil
		for _, t := range c.XTicks {
			if finite(t.X) && t.X >= xt.lo && t.X <= xt.hi {
				xt.ticks = append(xt.ticks, t.X)
				xt.labels = append(xt.labels, t.Label)
			}
		}
	}
	var yt axis
	var py func(float64) float64
	if c.LogY {
		yt = logAxis(ymin, ymax)
		lo, span := math.Log10(yt.lo), math.Log10(yt.hi)-math.Log10(yt.lo)
		py = func(y float64) float64 { return bottom - (math.Log10(y)-lo)/span*(bottom-top) }
	} else {
		yt = niceAxis(ymin, ymax)
		py = func(y float64) float64 { return bottom - (y-yt.lo)/(yt.hi-yt.lo)*(bottom-top) }
	}

	// Description for screen readers: what is plotted, over which ranges.
	var desc strings.Builder
	for i, l := range lines {
		if i > 0 {
			desc.WriteString("; ")
		}
		desc.WriteString(l.name + ": " + itoa(len(l.pts)) + " points")
	}
	desc.WriteString(". " + strings.TrimSpace(c.XLabel+" from "+FormatNumber(xmin)+" to "+FormatNumber(xmax)))
	desc.WriteString("; " + strings.TrimSpace(yTitle+" from "+FormatNumber(ymin)+" to "+FormatNumber(ymax)) + ".")
	b.WriteString(`<desc>` + esc(desc.String()) + `</desc>`)

	// Gridlines.
	b.WriteString(`<g class="chart-grid" stroke="#e3e6ea" stroke-width="1">`)
	for _, v := range yt.ticks {
		y := ftoa(py(v))
		b.WriteString(`<line x1="` + ftoa(left) + `" y1="` + y + `" x2="` + ftoa(right) + `" y2="` + y + `"/>`)
	}
	for _, v := range xt.ticks {
		x := ftoa(px(v))
		b.WriteString(`<line x1="` + x + `" y1="` + ftoa(top) + `" x2="` + x + `" y2="` + ftoa(bottom) + `"/>`)
	}
	b.WriteString(`</g>`)

	// Axes.
	b.WriteString(`<g class="chart-axis" stroke="#6b7280" stroke-width="1">`)
	b.WriteString(`<line x1="` + ftoa(left) + `" y1="` + ftoa(bottom) + `" x2="` + ftoa(right) + `" y2="` + ftoa(bottom) + `"/>`)
	b.WriteString(`<line x1="` + ftoa(left) + `" y1="` + ftoa(top) + `" x2="` + ftoa(left) + `" y2="` + ftoa(bottom) + `"/>`)
	b.WriteString(`</g>`)

	// Tick labels.
	b.WriteString(`<g class="chart-ticks" font-size="12" fill="#4a5160">`)
	for i, v := range yt.ticks {
		b.WriteString(`<text x="` + ftoa(left-6) + `" y="` + ftoa(py(v)) + `" text-anchor="end" dominant-baseline="middle">` + esc(yt.labels[i]) + `</text>`)
	}
	for i, v := range xt.ticks {
		b.WriteString(`<text x="` + ftoa(px(v)) + `" y="` + ftoa(bottom+16) + `" text-anchor="middle">` + esc(xt.labels[i]) + `</text>`)
	}
	b.WriteString(`</g>`)

	// Axis titles.
	if c.XLabel != "" {
		b.WriteString(`<text class="chart-xlabel" x="` + ftoa((left+right)/2) + `" y="` + itoa(h-8) + `" text-anchor="middle" font-size="13" fill="#1b1f24">` + esc(c.XLabel) + `</text>`)
	}
	if yTitle != "" {
		cy := ftoa((top + bottom) / 2)
		b.WriteString(`<text class="chart-ylabel" x="14" y="` + cy + `" transform="rotate(-90 14 ` + cy + `)" text-anchor="middle" font-size="13" fill="#1b1f24">` + esc(yTitle) + `</text>`)
	}

	// Legend, under the title: one entry per series or group, in rows.
	b.WriteString(`<g class="chart-legend" font-size="13" fill="#1b1f24">`)
	for i, name := range legend {
		st := seriesStyles[i%len(seriesStyles)]
		lx, ly := legendPos[i].x, legendPos[i].y
		y := strconv.FormatFloat(ly, 'f', -1, 64) // rows are whole units
		b.WriteString(`<line x1="` + ftoa(lx) + `" y1="` + y + `" x2="` + ftoa(lx+22) + `" y2="` + y + `" stroke="` + st.color + `" stroke-width="2.5"` + dashAttr(st.dash) + `/>`)
		b.WriteString(`<text x="` + ftoa(lx+28) + `" y="` + strconv.FormatFloat(ly+4, 'f', -1, 64) + `">` + esc(name) + `</text>`)
	}
	b.WriteString(`</g>`)

	// Series.
	b.WriteString(`<g class="chart-series" fill="none" stroke-width="2" stroke-linejoin="round" stroke-linecap="round">`)
	for _, l := range lines {
		st := seriesStyles[l.style%len(seriesStyles)]
		if len(l.pts) == 1 {
			p := l.pts[0]
			b.WriteString(`<circle cx="` + ftoa(px(p.x)) + `" cy="` + ftoa(py(p.y)) + `" r="3" fill="` + st.color + `" stroke="none"><title>` + esc(l.name) + `</title></circle>`)
			continue
		}
		b.WriteString(`<polyline stroke="` + st.color + `"` + dashAttr(st.dash) + ` points="`)
		for j, p := range l.pts {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(ftoa(px(p.x)) + "," + ftoa(py(p.y)))
		}
		b.WriteString(`"><title>` + esc(l.name) + `</title></polyline>`)
	}
	b.WriteString(`</g>`)

	// Linked points, over the lines so that every one can be clicked.
	for _, l := range lines {
		if l.links == nil {
			continue
		}
		st := seriesStyles[l.style%len(seriesStyles)]
		b.WriteString(`<g class="chart-points" fill="` + st.color + `">`)
		for j, p := range l.pts {
			dot := `<circle class="chart-point" cx="` + ftoa(px(p.x)) + `" cy="` + ftoa(py(p.y)) + `" r="3.5"><title>` + esc(l.tips[j]) + `</title></circle>`
			if l.links[j] != "" {
				dot = `<a href="` + esc(l.links[j]) + `">` + dot + `</a>`
			}
			b.WriteString(dot)
		}
		b.WriteString(`</g>`)
	}

	// Marks: a line across the plot and its label above it, on a
	// transparent box so that the label is easy to click.
	if len(c.Marks) > 0 {
		b.WriteString(`<g class="chart-marks" font-size="11">`)
		for i, m := range c.Marks {
			if lanes[i] < 0 {
				continue
			}
			x := ftoa(px(m.X))
			lo, hi := markLabelBox(m, px)
			// Lane 0 is nearest the plot; each further lane is a row up.
			base := top - float64(lanes[i])*chartMarkRow
			mark := `<g class="chart-mark ` + esc(m.Class) + `"><title>` + esc(m.Title) + `</title>` +
				`<line x1="` + x + `" y1="` + ftoa(base-4) + `" x2="` + x + `" y2="` + ftoa(bottom) + `" stroke="currentColor" stroke-width="1.5" stroke-dasharray="5 3"/>` +
				`<rect class="chart-mark-hit" x="` + ftoa(lo) + `" y="` + ftoa(base-20) + `" width="` + ftoa(hi-lo) + `" height="16" fill="transparent"/>` +
				`<text x="` + x + `" y="` + ftoa(base-8) + `" text-anchor="middle" fill="currentColor">` + esc(m.Label) + `</text></g>`
			if m.Href != "" {
				mark = `<a class="chart-mark-link" href="` + esc(m.Href) + `">` + mark + `</a>`
			}
			b.WriteString(mark)
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// markLabelBox is the horizontal extent of m's label (about its width at
// 11 px, with a little padding), centred on its line.
func markLabelBox(m ChartMark, px func(float64) float64) (lo, hi float64) {
	w := 6.5*float64(len([]rune(m.Label))) + 8
	return px(m.X) - w/2, px(m.X) + w/2
}

// markLanes gives each mark the lane its label is drawn in (0 nearest the
// plot), -1 for marks outside the X axis: greedily, in order of X, the
// lowest lane whose labels end left of this one's start, so that labels
// of close marks (a change point and an environment change at one run)
// never overprint each other.
func markLanes(marks []ChartMark, xt axis, px func(float64) float64) []int {
	lanes := make([]int, len(marks))
	order := make([]int, 0, len(marks))
	for i, m := range marks {
		if !finite(m.X) || m.X < xt.lo || m.X > xt.hi {
			lanes[i] = -1
			continue
		}
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(marks[a].X, marks[b].X) })
	const gap = 4
	var ends []float64 // the right end of each lane's last label
	for _, i := range order {
		lo, hi := markLabelBox(marks[i], px)
		lane := slices.IndexFunc(ends, func(end float64) bool { return end+gap <= lo })
		if lane < 0 {
			lane = len(ends)
			ends = append(ends, hi)
		} else {
			ends[lane] = hi
		}
		lanes[i] = lane
	}
	return lanes
}

// at is s[i], or "" past its end.
func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// axis is a range rounded out to nice tick values.
type axis struct {
	lo, hi float64
	ticks  []float64
	labels []string
}

// niceAxis covers [lo, hi] and zero with ticks at 1, 2 or 5 × 10ⁿ steps.
// Including zero keeps rates honest: a bar from 990 to 1,000 does not look
// like a cliff.
func niceAxis(lo, hi float64) axis {
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	if lo == hi {
		hi = 1
	}
	step := niceStep((hi - lo) / float64(chartMaxTicks-1))
	a := axis{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step}
	if a.lo == a.hi {
		a.hi = a.lo + step
	}
	a.addTicks(step)
	return a
}

// logAxis covers [lo, hi] (both positive) from the power of ten at or
// below lo to the one at or above hi, at least one decade. Ticks are the
// powers of ten, with 2 and 5 times each between them when the axis spans
// at most two decades (beyond that they would crowd).
func logAxis(lo, hi float64) axis {
	elo := math.Floor(math.Log10(lo) + 1e-9)
	ehi := math.Ceil(math.Log10(hi) - 1e-9)
	if ehi <= elo {
		ehi = elo + 1
	}
	a := axis{lo: math.Pow(10, elo), hi: math.Pow(10, ehi)}
	mults := []float64{1}
	if ehi-elo <= 2 {
		mults = []float64{1, 2, 5}
	}
	for e := elo; e <= ehi; e++ {
		for _, m := range mults {
			v := m * math.Pow(10, e)
			if v > a.hi*(1+1e-9) {
				break
			}
			// Each label on its own scale: the decades differ too much
			// for one (0.01 and 10k on one axis).
			scale, suffix := tickScale(v)
			dec := max(0, -int(math.Floor(math.Log10(v/scale)+1e-9)))
			a.ticks = append(a.ticks, v)
			a.labels = append(a.labels, numfmt.Fixed(v/scale, dec, numfmt.Hyphen)+suffix)
		}
	}
	return a
}

// dataAxis is the time axis of interval charts: from zero (the window's
// start) to exactly where the data ends, with ticks at 1, 2 or 5 × 10ⁿ
// steps inside that range. Rounding the end up to the next step, as
// niceAxis does, would draw 20.3 s of data on an axis to 25 s.
func dataAxis(lo, hi float64) axis {
	lo = math.Min(lo, 0)
	if !(hi > lo) {
		hi = lo + 1
	}
	a := axis{lo: lo, hi: hi}
	a.addTicks(niceStep((hi - lo) / float64(chartMaxTicks-1)))
	return a
}

// tickScale is the divisor and suffix of tick labels up to top: G, M,
// and k from 10k (below that the digits read as they are).
func tickScale(top float64) (float64, string) {
	switch {
	case top >= 1e9:
		return 1e9, "G"
	case top >= 1e6:
		return 1e6, "M"
	case top >= 1e4:
		return 1e3, "k"
	}
	return 1, ""
}

// addTicks puts a tick and its label on every multiple of step in
// [a.lo, a.hi].
func (a *axis) addTicks(step float64) {
	scale, suffix := tickScale(math.Max(math.Abs(a.lo), math.Abs(a.hi)))
	dec := max(0, -int(math.Floor(math.Log10(step/scale)+1e-9)))
	first := math.Ceil(a.lo/step - 1e-9)
	n := int(math.Floor(a.hi/step+1e-9) - first)
	for i := 0; i <= n; i++ {
		v := (first + float64(i)) * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		a.ticks = append(a.ticks, v)
		label := "0"
		if v != 0 {
			label = numfmt.Fixed(v/scale, dec, numfmt.Hyphen) + suffix
		}
		a.labels = append(a.labels, label)
	}
}

// niceStep is the smallest 1, 2 or 5 × 10ⁿ at least raw.
func niceStep(raw float64) float64 {
	if raw <= 0 || !finite(raw) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func dashAttr(d string) string {
	if d == "" {
		return ""
	}
	return ` stroke-dasharray="` + d + `"`
}

func itoa(n int) string { return strconv.Itoa(n) }

// ftoa formats an SVG coordinate with one decimal, never "-0.0".
func ftoa(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if s == "-0.0" {
		return "0.0"
	}
	return s
}

func esc(s string) string { return template.HTMLEscapeString(s) }
