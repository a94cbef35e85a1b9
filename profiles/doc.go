// Package profiles reads and transforms pprof profiles
// (github.com/google/pprof).
//
// Loading: Load for bytes kbench wrote, ParseFolded for folded stacks, and
// LoadUpload for uploads, which upload.go and pbscan.go read as a stream
// in capped passes (256 MiB decompressed, a 512 MiB load estimate, 48 MiB
// for legacy formats, totals within int64) before pprof parses them; every
// format then passes the same shape check (10,000 frames a stack,
// 1,000,000 flame-graph frames, 100,000 names). Kind tells a profile's kind
// from its sample and period types (wall for JFR-converted and other
// wall-clock samplers).
//
// Transforming: flame-graph trees (nested, and the compact pre-order
// encoding static/flamegraph.js decodes), diffs (tree, the -diff_base
// profile, normalisation, top changes) of one profile a side or of merged
// run sets (DiffRuns, TopChangesRuns, MergeRuns over RunInput: each run
// scaled by R_t / r_i, each side the mean of its runs, values float64),
// frame names normalised across JVMs (NormalizeFrameName, applied by the
// stacker every tree and table is built through), the viewer's views of a
// flattened graph (Flat: rows, top table, inverted, a function's callers
// and callees), and write/read-path classification.
//
// UI is pprof's own web UI embedded: handler sets built with driver.PProf
// without a port, serialized, in a bounded LRU. Its /source and /disasm
// are not served and the driver's object tool and symbolizer open nothing,
// so no file a profile names is read.
package profiles
