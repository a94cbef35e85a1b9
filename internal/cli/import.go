package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
)

// Import is `kbench import`.
var Import = &Command{
	Name:      "import",
	UsageLine: "import --label L FILE",
	Short:     "send Kafka perf tool output, a kbench result or OMB results to a running kbench serve",
	Run:       cmdImport,
}

const importUsage = `usage: kbench import --label L [--server URL] [--token T] [--profile P]... [--role client|broker]
       [--meta KEY=VALUE]... [--time RFC3339] [--series NAME] [--command "LINE"] FILE
       kbench import [--label L] [--server URL] [--token T] [--meta KEY=VALUE]... [--time RFC3339] [--series NAME] DIR
       kbench import --csv FILE --series NAME --workload producer|consumer|writepath [--server URL] [--token T]
       kbench import --table FILE --workload producer|consumer|e2e|writepath [--meta KEY=VALUE]... [--time RFC3339]
       kbench import [--omb] [--label L] [--meta KEY=VALUE]... [--time RFC3339] [--series NAME] OMB.json...

Sends the text output of Kafka's kafka-producer-perf-test,
kafka-consumer-perf-test, kafka-share-consumer-perf-test or
kafka-e2e-latency (EndToEndLatency) (FILE, or -
for stdin) to a running kbench server, which stores it as an imported
producer, consumer or e2e run with kbench's metric names, so it compares side by side with kbench's own runs. Profiles
(pprof or folded stacks) given with --profile are attached to the same run.
Nothing is stored unless the output and every profile are accepted.
--meta tags the run (commit=…, branch=…, version=… or any key), --time says
when it ran (e.g. 2022-06-21T10:00:00Z; default: now), so that old results
back-fill a history in their real order. Imports of one tool form a series
by label and branch, or by --series. --command gives the command line that
printed the output (quoted, as typed in the shell; its secrets are
replaced): comparisons then know the run's record size, record count and
acks, which the output does not print.

DIR is a directory "kbench run --out DIR" wrote, on this machine or any
other (a CI runner, a kbench built against a kafka-go branch): its
result.json and the profiles it names are stored as one run with
everything the result holds, its meta (--meta over the run's own), and its
start as its time (unless --time), in the series of the server's own runs
of the same workload, target and branch (unless --series).

--csv FILE back-fills a series from a CSV of past results, as Apache Otava
and spreadsheets hold them: a header "time,commit,<metric>…" (metric
columns named as kbench's metrics of --workload, other columns become
tags), one run per row, all stored or none.

--table FILE imports a wide table of results as JIRA issues and pull
requests paste them (Markdown, JIRA markup, CSV or tab-separated; - for
stdin): a line per metric, a column per run. Each column becomes an
imported run of --workload labelled by its header; metrics are named as
kbench's or as Kafka's Java clients report them (io-wait-ratio,
time-between-poll-avg), others are kept without a direction. Prints the
runs' URLs and their comparison's.

OMB.json is a result file of the OpenMessaging Benchmark (one per
workload and driver, as its benchmark writes them; told from other files
by its contents, or said with --omb): each becomes an imported e2e run
labelled by its driver (or --label), with OMB's figures under kbench's
names (publish-latency-*, publish-delay-*, e2e-latency-*, record-send-rate,
consume-rate), its 10 s windows and its quantile maps. Several files are
several runs, stored together or not at all; their comparison's URL is
printed after theirs. GET /api/runs/ID/omb.json gives any run back in
OMB's format.

The import goes through the server's API (POST /api/import, POST
/api/import/csv) rather than into its SQLite file: writing the database
behind a running server's back would race with it. Start one with
"kbench serve" first.

Prints the new runs' URLs. Exit codes: 0 imported, 1 refused by the
server (a parse error names the line) or the server is unreachable, 2 bad
usage.

flags:
`

// cmdImport is `kbench import`: a multipart POST to /api/import (Kafka
// tool output, a result directory) or /api/import/csv.
func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("kbench import", importUsage, stderr)
	fs.showUsage, fs.operands, fs.env = true, operandsAnywhere, theseFlags("server", "token")
	label := fs.String("label", "", "label of the new run, e.g. java-trunk (required for tool output)")
	serverURL := fs.String("server", "http://127.0.0.1:8080", "the kbench server (also KBENCH_SERVER)")
	token := fs.String("token", "", "the server's token, sent as Authorization: Bearer (also KBENCH_TOKEN)")
	role := fs.String("role", "", "side of the wire the profiles were taken on: client (default) or broker")
	var profilesFlag listFlag
	fs.Var(&profilesFlag, "profile", "a pprof profile or folded stacks to attach (repeatable)")
	var metaFlag listFlag
	fs.Var(&metaFlag, "meta", "tag the run with KEY=VALUE: commit, branch, version or any key (repeatable)")
	runTime := fs.String("time", "", "when the run happened, RFC 3339 (e.g. 2022-06-21T10:00:00Z); default: now, or a result's start")
	series := fs.String("series", "", "the series the run joins (default: its tool, label and branch; a result's workload, target and branch)")
	command := fs.String("command", "", "the command line that printed the output, as typed in the shell (comparisons read its record size, count and acks)")
	csvFile := fs.String("csv", "", "a CSV of past results to back-fill --series with, one run per row")
	workload := fs.String("workload", "", "with --csv or --table: the workload whose metrics the CSV's columns or the table's lines name")
	tableFile := fs.String("table", "", "a table of results (a line per metric, a column per run) to import as one run per column")
	ombFlag := fs.Bool("omb", false, "the FILEs are OpenMessaging Benchmark result JSON files, one run each (detected from their contents without it)")
	// Flags may come before or after FILE.
	if code, ok := fs.parse(args); !ok {
		return code
	}
	files := fs.args
	base := strings.TrimRight(*serverURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return fs.usageError("--server: must be an http:// or https:// URL, got %q", *serverURL)
	}
	client := newAPIClient(base, *token)
	if *csvFile != "" {
		return importCSV(ctx, client, *csvFile, *series, *workload, fs, stdout, stderr)
	}
	if *tableFile != "" {
		return importTable(ctx, client, *tableFile, *workload, fs, stdout, stderr)
	}
	if *workload != "" {
		return fs.usageError("--workload: only with --csv or --table")
	}
	if *ombFlag || allOMB(files) {
		return importOMB(ctx, client, files, fs, stdout, stderr)
	}
	switch {
	case len(files) == 0:
		return fs.usageError("name the file holding the Kafka tool output (or - for stdin), or a kbench run --out directory")
	case len(files) > 1:
		return fs.usageError("one output file or directory per run, got %d: %s", len(files), strings.Join(files, " "))
	}
	if _, err := rundoc.ParseMeta(metaFlag); err != nil {
		return fs.usageError("%v", err)
	}
	if *runTime != "" {
		if _, err := time.Parse(time.RFC3339, *runTime); err != nil {
			return fs.usageError("--time: want RFC 3339 such as 2022-06-21T10:00:00Z, got %q", *runTime)
		}
	}
	if *series != "" {
		if err := rundoc.ValidateSeriesName(*series); err != nil {
			return fs.usageError("%v", err)
		}
	}
	fields := [][2]string{{"label", *label}, {"time", *runTime}, {"series", *series}}
	for _, m := range metaFlag {
		fields = append(fields, [2]string{"meta", m})
	}
	var body []byte
	var contentType string
	var err error
	if info, statErr := os.Stat(files[0]); statErr == nil && info.IsDir() {
		switch {
		case len(profilesFlag) > 0:
			return fs.usageError("--profile: a result directory's profiles are the ones its result.json names")
		case *role != "":
			return fs.usageError("--role: a result directory's result.json says each profile's role")
		case *command != "":
			return fs.usageError("--command: a result directory's result.json says what ran")
		}
		body, contentType, err = resultBody(files[0], fields)
	} else {
		switch {
		case strings.TrimSpace(*label) == "":
			return fs.usageError("--label: needed, it names the run in comparisons")
		case *role != "" && *role != "client" && *role != "broker":
			return fs.usageError("--role: must be client or broker, got %q", *role)
		}
		if *role == "" {
			*role = "client"
		}
		body, contentType, err = importBody(files[0], append(fields, [2]string{"role", *role}, [2]string{"command", *command}), profilesFlag)
	}
	if err != nil {
		return fs.argError(err)
	}
	run, err := client.Import(ctx, body, contentType)
	if err != nil {
		reportPostError(stderr, "kbench import", files[0], err)
		return 1
	}
	runURL, err := runURLOf(client, run)
	if err != nil {
		fmt.Fprintf(stderr, "kbench import: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, runURL)
	return 0
}

// storeResult sends the result directory dir (its result.json and the
// profiles it names) to /api/import with fields and returns the new
// run's URL: how kbench run --server and kbench exec store what they
// ran. It runs to its end even when ctx is cancelled (an interrupted run
// is stored as such).
func storeResult(ctx context.Context, c *client.Client, dir string, fields [][2]string) (string, error) {
	body, contentType, err := resultBody(dir, fields)
	if err != nil {
		return "", err
	}
	run, err := c.Import(context.WithoutCancel(ctx), body, contentType)
	if err != nil {
		return "", err
	}
	return runURLOf(c, run)
}

// runURLOf is the full URL of the run an import created.
func runURLOf(c *client.Client, run *client.Run) (string, error) {
	if run.URL == "" {
		return "", fmt.Errorf("unexpected answer from the server: run #%d without a url", run.ID)
	}
	return c.BaseURL() + run.URL, nil
}

// reportPostError prints why a post failed; a refusal naming a line of
// file is first printed file:line[:column]: as compilers do, for editors
// to jump to.
func reportPostError(stderr io.Writer, prefix, file string, err error) {
	var r *client.Error
	if errors.As(err, &r) && r.Body.Line > 0 {
		if r.Body.Column > 0 {
			fmt.Fprintf(stderr, "%s:%d:%d: %s\n", file, r.Body.Line, r.Body.Column, r.Message)
		} else {
			fmt.Fprintf(stderr, "%s:%d: %s\n", file, r.Body.Line, r.Message)
		}
	}
	fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
}

// resultBody builds the multipart request of a result directory: the
// fields (empty ones left out), result.json as the "result" file and
// every profile it names as a "profile" file of that name, and the
// histogram log it names as the "histogram_log" file. The server checks
// the document (its schema included); this reads only which files to
// send.
func resultBody(dir string, fields [][2]string) ([]byte, string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s holds no result.json: name a directory kbench run --out wrote", dir)
	}
	if err != nil {
		return nil, "", err
	}
	var names struct {
		Profiles     []rundoc.ProfileFile `json:"profiles"`
		HistogramLog string               `json:"histogram_log"`
	}
	if err := json.Unmarshal(data, &names); err != nil {
		return nil, "", fmt.Errorf("%s: %w", filepath.Join(dir, "result.json"), err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if f[1] != "" {
			mw.WriteField(f[0], f[1])
		}
	}
	add := func(field, name string, data []byte) error {
		w, err := mw.CreateFormFile(field, name)
		if err == nil {
			_, err = w.Write(data)
		}
		return err
	}
	if err := add("result", "result.json", data); err != nil {
		return nil, "", err
	}
	for _, pf := range names.Profiles {
		name := filepath.Base(pf.File)
		p, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, "", fmt.Errorf("result.json names profile %s: %w", name, err)
		}
		if err := add("profile", name, p); err != nil {
			return nil, "", err
		}
	}
	if names.HistogramLog != "" {
		name := filepath.Base(names.HistogramLog)
		log, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, "", fmt.Errorf("result.json names histogram log %s: %w", name, err)
		}
		if err := add("histogram_log", name, log); err != nil {
			return nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// importBody builds the multipart request: the fields (label, role, time,
// series and meta; empty ones left out), the output file and the
// profiles.
func importBody(file string, fields [][2]string, profiles []string) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if f[1] != "" {
			mw.WriteField(f[0], f[1])
		}
	}
	add := func(field, path string) error {
		var data []byte
		var err error
		name := filepath.Base(path)
		if path == "-" {
			data, err = io.ReadAll(os.Stdin)
			name = "stdin.txt"
		} else {
			data, err = os.ReadFile(path)
		}
		if err != nil {
			return err
		}
		w, err := mw.CreateFormFile(field, name)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if err := add("output", file); err != nil {
		return nil, "", err
	}
	for _, p := range profiles {
		if p == "-" {
			return nil, "", errors.New("--profile: stdin is for the output; name the profile's file")
		}
		if err := add("profile", p); err != nil {
			return nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}
