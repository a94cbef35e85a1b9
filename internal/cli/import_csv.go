package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
	"slices"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
)

// importCSV is `kbench import --csv FILE --series S --workload W`: a POST
// to /api/import/csv. It prints the URL of every run stored, in the
// file's order.
func importCSV(ctx context.Context, client *client.Client, file, series, workload string, fs *commandFlags, stdout, stderr io.Writer) int {
	args := fs.args
	_, bad := importFields(fs, []string{"csv", "series", "workload", "server", "token"}, nil)
	switch {
	case bad != "":
		return fs.usageError("%s: not with --csv (the CSV's columns say each run's time and tags)", bad)
	case len(args) > 0:
		return fs.usageError("--csv names the file; unexpected argument %q", args[0])
	case series == "":
		return fs.usageError("--series: needed with --csv, it names the series the rows back-fill")
	case !rundoc.Workload(workload).Runnable():
		return fs.usageError("--workload: needed with --csv: producer, consumer or writepath (its metrics name the columns), got %q", workload)
	}
	if err := rundoc.ValidateSeriesName(series); err != nil {
		return fs.usageError("%v", err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fs.argError(err)
	}
	body, contentType, err := fileForm([][2]string{{"series", series}, {"workload", workload}}, "file", filepath.Base(file), data)
	if err != nil {
		return fs.argError(err)
	}
	resp, err := client.ImportCSV(ctx, body, contentType)
	if err != nil {
		reportPostError(stderr, "kbench import", file, err)
		return 1
	}
	if len(resp.Runs) == 0 {
		fmt.Fprintf(stderr, "kbench import: unexpected answer from the server: no runs\n")
		return 1
	}
	for _, r := range resp.Runs {
		fmt.Fprintln(stdout, client.BaseURL()+r.URL)
	}
	fmt.Fprintf(stderr, "kbench import: %d runs stored in series %s\n", len(resp.Runs), series)
	return 0
}

// importTable is `kbench import --table FILE --workload W`: a POST of the
// "table" field to /api/import. It prints the URL of every run stored, in
// column order, then their comparison's.
func importTable(ctx context.Context, client *client.Client, file, workload string, fs *commandFlags, stdout, stderr io.Writer) int {
	args := fs.args
	// Tags and time apply to every run.
	fields, bad := importFields(fs, []string{"table", "workload", "server", "token"}, []string{"time", "meta"})
	switch {
	case bad != "":
		return fs.usageError("%s: not with --table (each column's header labels its run, and each run joins its label's series)", bad)
	case len(args) > 0:
		return fs.usageError("--table names the file; unexpected argument %q", args[0])
	case !rundoc.Workload(workload).Runnable():
		return fs.usageError("--workload: needed with --table: producer, consumer, e2e or writepath (its metrics name the lines), got %q", workload)
	}
	var data []byte
	var err error
	name := filepath.Base(file)
	if file == "-" {
		data, err = io.ReadAll(os.Stdin)
		name = "stdin.txt"
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return fs.argError(err)
	}
	body, contentType, err := fileForm(append([][2]string{{"workload", workload}}, fields...), "table", name, data)
	if err != nil {
		return fs.argError(err)
	}
	resp, err := client.ImportTable(ctx, body, contentType)
	if err != nil {
		reportPostError(stderr, "kbench import", file, err)
		return 1
	}
	if len(resp.Runs) == 0 {
		fmt.Fprintf(stderr, "kbench import: unexpected answer from the server: no runs\n")
		return 1
	}
	for _, r := range resp.Runs {
		fmt.Fprintln(stdout, client.BaseURL()+r.URL)
	}
	if resp.CompareURL != "" {
		fmt.Fprintln(stdout, client.BaseURL()+resp.CompareURL)
	}
	fmt.Fprintf(stderr, "kbench import: %d runs stored, one per column of %s\n", len(resp.Runs), name)
	return 0
}

// fileForm builds a multipart body of fields (name, value; in order) and
// one file, data under field fileField named name.
func fileForm(fields [][2]string, fileField, name string, data []byte) (body []byte, contentType string, err error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	w, err := mw.CreateFormFile(fileField, name)
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// importFields reads the flags given to a kbench import of many runs at
// once: those named in pass become its form fields (--meta once per
// value), those in skip are the import's own, and bad is the first
// other flag given ("" for none), which that import refuses.
func importFields(fs *commandFlags, skip, pass []string) (fields [][2]string, bad string) {
	fs.Visit(func(f *flag.Flag) {
		switch {
		case slices.Contains(skip, f.Name):
		case slices.Contains(pass, f.Name) && f.Name == "meta":
			for _, m := range *f.Value.(*listFlag) {
				fields = append(fields, [2]string{"meta", m})
			}
		case slices.Contains(pass, f.Name):
			fields = append(fields, [2]string{f.Name, f.Value.String()})
		case bad == "":
			bad = "--" + f.Name
		}
	})
	return fields, bad
}
