// Package runimport reads results kept outside kbench into runs: a CSV
// of past results, one run per row (ParseResultsCSV, the format Apache
// Otava reads and spreadsheets export), and a wide table pasted from an
// issue or a spreadsheet, one run per column (ParseResultsTable). The
// server's import handlers store what it reads.
//
// It parses and nothing else: no HTTP, no store, and no metric catalog of
// its own. The metrics a workload's columns or rows may name are given by
// the caller (runner.ImportMetrics, through the server), so that it links
// no Kafka client; it imports only the run contract (rundoc). Its errors
// say which field is wrong (CellError with the line and column,
// LimitError, rundoc.FieldError); the server maps them to statuses.
package runimport
