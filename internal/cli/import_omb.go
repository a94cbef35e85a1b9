package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/omb"
)

// readOMBFile reads an OMB result file ("-" for stdin), refusing one
// over omb.MaxBytes before sending it.
func readOMBFile(file string) (name string, data []byte, err error) {
	var r io.Reader
	name = filepath.Base(file)
	if file == "-" {
		r, name = os.Stdin, "stdin.json"
	} else {
		f, err := os.Open(file)
		if err != nil {
			return "", nil, err
		}
		defer f.Close()
		r = f
	}
	if data, err = io.ReadAll(io.LimitReader(r, omb.MaxBytes+1)); err != nil {
		return "", nil, err
	}
	if len(data) > omb.MaxBytes {
		return "", nil, fmt.Errorf("%s: over %d bytes, more than an OMB result holds", file, omb.MaxBytes)
	}
	return name, data, nil
}

// allOMB reports whether every file is an OMB result (omb.Detect): then
// kbench import sends them as such without --omb. A directory, stdin or
// a file it cannot read is not.
func allOMB(files []string) bool {
	for _, f := range files {
		if f == "-" {
			return false
		}
		if info, err := os.Stat(f); err != nil || info.IsDir() || info.Size() > omb.MaxBytes {
			return false
		}
		data, err := os.ReadFile(f)
		if err != nil || !omb.Detect(data) {
			return false
		}
	}
	return len(files) > 0
}

// importOMB is `kbench import [--omb] FILE...` of OpenMessaging Benchmark
// results: one POST of every file as an "omb" field to /api/import, one
// run each, all stored or none. It prints the runs' URLs in the files'
// order, then their comparison's when there are several.
func importOMB(ctx context.Context, c *client.Client, files []string, fs *commandFlags, stdout, stderr io.Writer) int {
	fields, bad := importFields(fs, []string{"omb", "server", "token"}, []string{"label", "time", "series", "meta"})
	switch {
	case bad != "":
		return fs.usageError("%s: not with OMB results (each is a run of its own, its figures and workload in the file)", bad)
	case len(files) == 0:
		return fs.usageError("--omb: name the OMB result files (or - for stdin)")
	}
	stdin := 0
	for _, f := range files {
		if f == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return fs.usageError("- (stdin) given %d times", stdin)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if f[1] != "" {
			mw.WriteField(f[0], f[1])
		}
	}
	for _, f := range files {
		name, data, err := readOMBFile(f)
		if err == nil {
			var w io.Writer
			if w, err = mw.CreateFormFile("omb", name); err == nil {
				_, err = w.Write(data)
			}
		}
		if err != nil {
			return fs.argError(err)
		}
	}
	if err := mw.Close(); err != nil {
		return fs.argError(err)
	}
	resp, err := c.ImportOMB(ctx, buf.Bytes(), mw.FormDataContentType())
	if err != nil {
		// The server's message names the file and its field.
		reportPostError(stderr, "kbench import", files[0], err)
		return 1
	}
	if len(resp.Runs) == 0 {
		fmt.Fprintf(stderr, "kbench import: unexpected answer from the server: no runs\n")
		return 1
	}
	for _, r := range resp.Runs {
		fmt.Fprintln(stdout, c.BaseURL()+r.URL)
	}
	if resp.CompareURL != "" {
		fmt.Fprintln(stdout, c.BaseURL()+resp.CompareURL)
	}
	fmt.Fprintf(stderr, "kbench import: %d OMB %s stored, one run each\n", len(resp.Runs), map[bool]string{true: "result", false: "results"}[len(resp.Runs) == 1])
	return 0
}
