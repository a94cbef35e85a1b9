package client

import "github.com/kbench/kbench/client/wire"

// The API's wire types are package wire's (client/wire), which imports no
// HTTP client so that the views and comparisons can use them; here they
// are the client's, for callers of the Go client.
type (
	AddRepetitions     = wire.AddRepetitions
	Better             = wire.Better
	Canceling          = wire.Canceling
	Cell               = wire.Cell
	ChangePoint        = wire.ChangePoint
	Column             = wire.Column
	Comparison         = wire.Comparison
	Config             = wire.Config
	CreateReport       = wire.CreateReport
	CreateRuns         = wire.CreateRuns
	CreateSweep        = wire.CreateSweep
	CreateSLO          = wire.CreateSLO
	Created            = wire.Created
	Diff               = wire.Diff
	DiffCompact        = wire.DiffCompact
	DiffNode           = wire.DiffNode
	DiffSignificance   = wire.DiffSignificance
	DiffWritePaths     = wire.DiffWritePaths
	Difference         = wire.Difference
	FlameCompact       = wire.FlameCompact
	FlameGraph         = wire.FlameGraph
	FlameNode          = wire.FlameNode
	FunctionChange     = wire.FunctionChange
	FunctionNaming     = wire.FunctionNaming
	Functions          = wire.Functions
	Histogram          = wire.Histogram
	History            = wire.History
	HistoryParams      = wire.HistoryParams
	HistoryPoint       = wire.HistoryPoint
	Mark               = wire.Mark
	Metric             = wire.Metric
	MovedFunction      = wire.MovedFunction
	Normalization      = wire.Normalization
	OMBResult          = wire.OMBResult
	OMBQuantile        = wire.OMBQuantile
	OMBQuantiles       = wire.OMBQuantiles
	Profile            = wire.Profile
	RunHistograms      = wire.RunHistograms
	ProfileKind        = wire.ProfileKind
	ProfileMeta        = wire.ProfileMeta
	ProfileRole        = wire.ProfileRole
	Profiles           = wire.Profiles
	FlameRows          = wire.FlameRows
	FlameTop           = wire.FlameTop
	TopFunction        = wire.TopFunction
	RowsMatch          = wire.RowsMatch
	SkippedRun         = wire.SkippedRun
	Regression         = wire.Regression
	Regressions        = wire.Regressions
	ReportCreated      = wire.ReportCreated
	ReportSweep        = wire.ReportSweep
	ReportSweepPoint   = wire.ReportSweepPoint
	Row                = wire.Row
	Run                = wire.Run
	RunList            = wire.RunList
	SampleType         = wire.SampleType
	Segment            = wire.Segment
	SeriesPoint        = wire.SeriesPoint
	Source             = wire.Source
	Status             = wire.Status
	SLO                = wire.SLO
	SLOCanceled        = wire.SLOCanceled
	SLOConfig          = wire.SLOConfig
	SLOCreated         = wire.SLOCreated
	SLONext            = wire.SLONext
	SLOProbe           = wire.SLOProbe
	SLORun             = wire.SLORun
	Sweep              = wire.Sweep
	SweepCanceled      = wire.SweepCanceled
	SweepConfig        = wire.SweepConfig
	SweepConfigRequest = wire.SweepConfigRequest
	SweepCreated       = wire.SweepCreated
	SweepFigure        = wire.SweepFigure
	SweepMax           = wire.SweepMax
	SweepPhase         = wire.SweepPhase
	SweepPoint         = wire.SweepPoint
	SweepReport        = wire.SweepReport
	SweepRun           = wire.SweepRun
	Target             = wire.Target
	Warning            = wire.Warning
	Workload           = wire.Workload
	WritePathRow       = wire.WritePathRow
	WritePaths         = wire.WritePaths
	WritepathPreset    = wire.WritepathPreset
)

// The states of a run.
const (
	StatusQueued      = wire.StatusQueued
	StatusRunning     = wire.StatusRunning
	StatusSucceeded   = wire.StatusSucceeded
	StatusFailed      = wire.StatusFailed
	StatusCanceled    = wire.StatusCanceled
	StatusInterrupted = wire.StatusInterrupted
)

// The directions of a metric.
const (
	HigherIsBetter = wire.HigherIsBetter
	LowerIsBetter  = wire.LowerIsBetter
)
