// Package compare turns stored runs into comparison tables like the ones
// Kafka developers put in pull requests: one row per metric, one column per
// run or repetition group, the first column the baseline, and for every
// other column the change against the baseline with a verdict that says
// whether the data supports it.
//
// The package is pure logic (no HTTP, no database): [Columns] forms
// columns from runs, [Build] makes a [Table], and [Markdown], [CSV] and
// [JSON] export it.
//
// # Cells
//
// A cell of a single-run column is that run's value. A cell of a column of
// several runs (a repetition group, or runs sharing a label; warm-up runs
// left out) is the median of the runs' values, with its confidence
// interval from golang.org/x/perf/benchmath (AssumeNothing, as benchstat)
// when there are enough samples for one: 6 at 95%. With fewer the cell
// has no interval and a note says so. N is the number of runs that have
// the metric.
//
// # Changes and verdicts
//
// Every non-baseline cell shows the change of its value (median) against
// the baseline's, in percent of the baseline. Only the headline metrics of
// the runs' workloads are tested ([HeadlineMetrics]: a producer's
// record-send-rate, mb-per-sec and record latency p50/p99/p999, a
// consumer's four rates, the write path's rates, latency percentiles and
// costs); every other row is descriptive: its change is shown with no
// test, p-value or verdict. Testing all ~30 figures of a run at α would
// flag about 30·α of them between identical runs.
//
// A headline change gets a verdict by the metric's direction
// (rundoc.Metric.Better: a higher rate is better, a higher latency worse,
// and a metric without a direction never gets one). Whether the verdict
// may be trusted depends on the samples:
//
//	both sides ≥ 4 runs (at α = 0.05)   Mann-Whitney U test (benchmath), p-values adjusted
//	                                    across the table's tested changes (Benjamini-Hochberg, q = α):
//	                                    adjusted p ≤ α: better / worse   "+3.4% ✓"  ("≠" without direction)
//	                                    α < adjusted p ≤ 2α: borderline  "+4.0% borderline"
//	                                    interval beyond ±5%: inconclusive "+1.2% inconclusive"
//	                                    else no change beyond ±5%         "+0.8% ~"
//	both sides ≥ 2 runs, a side < 4     too few samples: no verdict, p kept  "+3.4% n<4"
//	one run against several             too few samples: no verdict, no p    "+3.4% n<4"
//	one run on each side                not tested: verdict by direction     "+3.4% ✓?"  "−3.4% ✗?"  "0.0% ="
//
// The change shown on every row, tested or not, is the ratio of the
// values shown (the columns' medians): one estimator a reader can check.
// A tested change also gets, in a column of its own ([Table.HLText]),
// the Hodges-Lehmann estimate of the ratio of the
// candidate's runs to the baseline's (the median of all pairwise ratios,
// i.e. of the differences of log values) with its distribution-free 1−α
// confidence interval, the range of shifts the same Mann-Whitney test
// does not reject (exact U distribution up to 50 runs per side, normal
// approximation above), and its adjusted p-value: "+3.4% [+1.1%, +5.9%]
// adj. p=0.002". Borderline, inconclusive and too-few changes are
// undecided: the cell, its column ([ColumnInfo.MoreRepetitions]) and the
// table ([Table.MoreRepetitions], [Table.Suggestion]) say how many more
// runs per side would help, by a rule stated in the table's notes.
// [Table.Flags] lists the significant changes: between identical
// configurations, false flags.
//
// So a reader never sees a bare ✓ or ✗ unless the U test found a headline
// change significant after the adjustment with enough runs on both sides;
// a change from single runs always carries "?" and the note "single
// runs: no significance test". The numbers 4 and 6 follow from α and the
// confidence level ([Table.TestMinN], [Table.IntervalMinN]).
//
// # Notation
//
// Text exports share one notation ([Row.ValueText], [Table.ChangeText],
// [Table.Legend]): thousands separators, a real minus sign (U+2212),
// about three significant digits with the same decimals across a row
// ("1,234,567", "4.12", "94.10"; whole values without decimals, as their
// source gave them), intervals as "±2.3%", changes as "+3.4%" / "−12.0%",
// intervals of changes as "[+1.1%, +5.9%]", adjusted p-values as
// "adj. p=0.382". Markdown cells read "value ±interval (change mark)",
// e.g. "1,809,000 ±3.5% (+20.0% ✓)", a column with tested changes is
// followed by its Hodges-Lehmann column ("+20.0% [+16.5%, +23.6%] adj.
// p=0.002"), and the tested metrics' names are in bold. CSV and JSON
// carry raw numbers: median_change_pct and hl_change_pct, hl_ci_low,
// hl_ci_high.
//
// # Comparability and warnings
//
// Every table also says whether its columns are like for like
// ([Table.Comparability], comparability.go): each run's recorded
// environment, resolved client configuration (result.json's
// environment.config), target and defining spec parameters are read as
// settings, and a setting whose value differs between columns, or
// between the runs of one column ("mixed: a, b"), is listed with one
// value per column. Unknown values (a run that did not record the
// setting) are never a difference; runs without a recorded
// configuration are named in a note. Times, host names, topic and group
// names and the embedded broker's address are not compared; the
// 1-minute load average at start is, once the runs span
// [LoadAverageSpan] or more ([ComparabilityRule] says it in full).
//
// [RunWarnings] flags a run's measured window under [MinWindowSeconds]
// and percentile figures resting on fewer than [MinPercentileSamples]
// samples: latency percentiles on the latency histogram's count, CPU
// p99 and maximum on the CPU sampler's. Tables carry them per run
// ([Table.Warnings]); every export shows both.
package compare
