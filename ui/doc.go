// Package ui turns kbench's data into pages: view models built from
// internal/rundoc runs, internal/compare tables and internal/history
// series, the new-run form from rundoc's option table, and rendering
// through html/template. It knows nothing of HTTP: the server builds a
// view, renders it into a buffer and writes that.
//
// Numbers, sizes, shares and durations go through internal/numfmt. There
// is one line-chart implementation (chart.go: server-side SVG, at most 600
// points a line, time axes ending with the data), also used by the live
// page, which fetches its charts as an HTML fragment as intervals arrive
// (LiveCharts). Report notes are Markdown (markdown.go: goldmark, raw HTML
// escaped, links limited to safe schemes). The site navigation is one
// table.
//
// ui links no Kafka client, no database driver and no gin
// (internal/layering checks it).
package ui
