package wire

import "github.com/kbench/kbench/internal/rundoc"

// The closed sets of values a run is made of, as the run contract
// (internal/rundoc) declares them. They are aliases, so a module outside
// kbench can name them and compare with the constants below.
type (
	// Workload is what a run measured: producer, consumer, writepath, e2e
	// or imported.
	Workload = rundoc.Workload
	// Status is where a run is in its life: queued, running, succeeded,
	// failed, canceled or interrupted.
	Status = rundoc.Status
	// Source says whether kbench launched a run or it was imported.
	Source = rundoc.Source
	// Better is a metric's direction: higher, lower or "" (neither).
	Better = rundoc.Better
	// ProfileRole is whose profile it is: the client's or a broker's.
	ProfileRole = rundoc.ProfileRole
	// ProfileKind is what a profile samples: cpu, heap, wall, ….
	ProfileKind = rundoc.ProfileKind
	// SeriesPoint is one interval of a run's throughput series.
	SeriesPoint = rundoc.SeriesPoint
)

// The statuses of a run.
const (
	StatusQueued      = rundoc.StatusQueued
	StatusRunning     = rundoc.StatusRunning
	StatusSucceeded   = rundoc.StatusSucceeded
	StatusFailed      = rundoc.StatusFailed
	StatusCanceled    = rundoc.StatusCanceled
	StatusInterrupted = rundoc.StatusInterrupted
)

// The directions of a metric.
const (
	HigherIsBetter = rundoc.HigherIsBetter
	LowerIsBetter  = rundoc.LowerIsBetter
)
