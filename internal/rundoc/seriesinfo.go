package rundoc

import "errors"

// ErrNotFound is what a read of a run, series, profile or report that
// does not exist returns (the store's ErrNotFound is this value): readers
// that reach the store through an interface, such as the regressions
// cache, tell a series deleted since it was listed from a failed read
// without linking the store.
var ErrNotFound = errors.New("not found")

// SeriesInfo is one series as the store lists it: its key and the
// signature of its succeeded runs.
type SeriesInfo struct {
	// Key is the series key (Run.SeriesKey); Workload the workload of
	// its last succeeded run stored (a series' runs share one, but for
	// imports named by hand).
	Key      string
	Workload string
	// Runs counts its succeeded runs; MaxID and SumID are their largest
	// id and the sum of their ids. Together they change whenever a run
	// of the series succeeds or is deleted, so what was derived from a
	// series can be kept until they do.
	Runs  int
	MaxID uint
	SumID uint64
}

// SeriesHead is what names a series: its newest stored run's label,
// workload and spec (SeriesInfo.MaxID).
type SeriesHead struct {
	Label    string
	Workload Workload
	// Spec is the run's spec as JSON, secrets removed (the stored run's
	// Spec).
	Spec string
}
