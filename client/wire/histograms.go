package wire

import "github.com/kbench/kbench/internal/rundoc"

// Histogram is one latency histogram of a run: its kind, its scope
// (window: the whole measured window; interval: one second of it), its
// time in seconds since the window opened, its count of values, and its
// data in RunHistograms' encoding.
type Histogram = rundoc.Histogram

// RunHistograms is a run's latency histograms (GET
// /api/runs/{id}/histograms): every histogram in Unit, from Lowest to
// Highest at Digits significant digits, its data in Encoding
// (HdrHistogram's compressed V2, base64), which HdrHistogram's libraries
// decode; histograms of one layout merge by adding counts.
type RunHistograms struct {
	Run        uint        `json:"run"`
	Unit       string      `json:"unit"`
	Encoding   string      `json:"encoding"`
	Lowest     int64       `json:"lowest"`
	Highest    int64       `json:"highest"`
	Digits     int         `json:"digits"`
	Histograms []Histogram `json:"histograms"`
}
