package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kbench/kbench/rundoc"
)

const importUsage = `usage: kbench import --label L [--server URL] [--token T] [--profile P]... [--role client|broker]
       [--meta KEY=VALUE]... [--time RFC3339] [--series NAME] FILE

Sends the text output of Kafka's kafka-producer-perf-test or
kafka-consumer-perf-test (FILE, or - for stdin) to a running kbench server,
which stores it as an imported producer or consumer run with kbench's
metric names, so it compares side by side with kbench's own runs. Profiles
(pprof or folded stacks) given with --profile are attached to the same run.
Nothing is stored unless the output and every profile are accepted.
--meta tags the run (commit=…, branch=…, version=… or any key), --time says
when it ran (e.g. 2022-06-21T10:00:00Z; default: now), so that old results
back-fill a history in their real order. Imports of one tool form a series
by label and branch, or by --series.

The import goes through the server's API (POST /api/import) rather than
into its SQLite file: writing the database behind a running server's back
would race with it. Start one with "kbench serve" first.

Prints the new run's URL. Exit codes: 0 imported, 1 refused by the server
(a parse error names the line) or the server is unreachable, 2 bad usage.

flags:
`

// cmdImport is `kbench import`: a multipart POST to /api/import.
func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kbench import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), importUsage)
		fs.PrintDefaults()
	}
	label := fs.String("label", "", "label of the new run, e.g. java-trunk (required)")
	serverURL := fs.String("server", envOr("server", "http://127.0.0.1:8080"), "the kbench server (also KBENCH_SERVER)")
	token := fs.String("token", envOr("token", ""), "the server's token, sent as Authorization: Bearer (also KBENCH_TOKEN)")
	role := fs.String("role", "client", "side of the wire the profiles were taken on: client or broker")
	var profilesFlag listFlag
	fs.Var(&profilesFlag, "profile", "a pprof profile or folded stacks to attach (repeatable)")
	var metaFlag listFlag
	fs.Var(&metaFlag, "meta", "tag the run with KEY=VALUE: commit, branch, version or any key (repeatable)")
	runTime := fs.String("time", "", "when the run happened, RFC 3339 (e.g. 2022-06-21T10:00:00Z); default: now")
	series := fs.String("series", "", "the series the run joins (default: its tool, label and branch)")
	// Flags may come before or after FILE.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "kbench import: "+format+"\n\n", a...)
		fs.Usage()
		return 2
	}
	switch {
	case len(files) == 0:
		return usageErr("name the file holding the Kafka tool output (or - for stdin)")
	case len(files) > 1:
		return usageErr("one output file per run, got %d: %s", len(files), strings.Join(files, " "))
	case strings.TrimSpace(*label) == "":
		return usageErr("--label: needed, it names the run in comparisons")
	case *role != "client" && *role != "broker":
		return usageErr("--role: must be client or broker, got %q", *role)
	}
	if _, err := rundoc.ParseMeta(metaFlag); err != nil {
		return usageErr("%v", err)
	}
	if *runTime != "" {
		if _, err := time.Parse(time.RFC3339, *runTime); err != nil {
			return usageErr("--time: want RFC 3339 such as 2022-06-21T10:00:00Z, got %q", *runTime)
		}
	}
	if *series != "" {
		if err := rundoc.ValidateSeriesName(*series); err != nil {
			return usageErr("%v", err)
		}
	}
	fields := [][2]string{{"label", *label}, {"role", *role}, {"time", *runTime}, {"series", *series}}
	for _, m := range metaFlag {
		fields = append(fields, [2]string{"meta", m})
	}
	base := strings.TrimRight(*serverURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return usageErr("--server: must be an http:// or https:// URL, got %q", *serverURL)
	}

	body, contentType, err := importBody(files[0], fields, profilesFlag)
	if err != nil {
		fmt.Fprintf(stderr, "kbench import: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/import", bytes.NewReader(body))
	if err != nil {
		return usageErr("--server: %v", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "kbench import: cannot reach the kbench server at %s (start one with \"kbench serve\", or give --server): %v\n", base, err)
		return 1
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		fmt.Fprintf(stderr, "kbench import: reading the server's answer: %v\n", err)
		return 1
	}
	if resp.StatusCode != http.StatusCreated {
		var e struct {
			Error string `json:"error"`
			Field string `json:"field"`
			Line  int    `json:"line"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		if e.Line > 0 {
			// file:line first, as compilers print it, for editors to jump to.
			fmt.Fprintf(stderr, "%s:%d: %s\n", files[0], e.Line, msg)
		}
		fmt.Fprintf(stderr, "kbench import: the server refused the import (%s): %s\n", resp.Status, msg)
		return 1
	}
	var run struct {
		ID       uint   `json:"id"`
		URL      string `json:"url"`
		Workload string `json:"workload"`
	}
	if err := json.Unmarshal(data, &run); err != nil || run.URL == "" {
		fmt.Fprintf(stderr, "kbench import: unexpected answer from the server: %.200s\n", data)
		return 1
	}
	fmt.Fprintln(stdout, base+run.URL)
	return 0
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
