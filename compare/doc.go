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
// the baseline's, in percent of the baseline, and a verdict by the
// metric's direction (store.Metric.Better): a higher rate is better, a
// higher latency worse, and a metric without a direction never gets one.
// Whether the verdict may be trusted depends on the samples:
//
//	both sides ≥ 4 runs (at α = 0.05)   Mann-Whitney U test (benchmath):
//	                                    p ≤ α: better / worse      "+3.4% ✓"  "−12.0% ✗"  ("≠" without direction)
//	                                    p > α: same, shown as ~    "+0.8% ~ p=0.382"
//	both sides ≥ 2 runs, a side < 4     too few samples: no verdict, p kept  "+3.4% n<4"
//	one run against several             too few samples: no verdict, no p    "+3.4% n<4"
//	one run on each side                not tested: verdict by direction     "+3.4% ✓?"  "−3.4% ✗?"  "0.0% ="
//
// So a reader never sees a bare ✓ or ✗ unless the U test found the change
// significant with enough runs on both sides; a change from single runs
// always carries "?" and the note "single runs: no significance test".
// The numbers 4 and 6 follow from α and the confidence level
// ([Table.TestMinN], [Table.IntervalMinN]).
//
// # Notation
//
// Text exports share one notation ([Row.ValueText], [Table.ChangeText],
// [Table.Legend]): thousands separators, a real minus sign (U+2212),
// about three significant digits with the same decimals across a row
// ("1,234,567", "4.12", "95.00"), intervals as "±2.3%", changes as
// "+3.4%" / "−12.0%", p-values as "p=0.382". Markdown cells read
// "value ±interval (change mark)", e.g. "1,809,000 ±3.5% (+20.0% ✓)".
// CSV and JSON carry raw numbers.
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
