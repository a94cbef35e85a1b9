package rundoc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseRunCommand: kbench run's own flags are read by the same parser
// as the workload's, before or after the workload, as --name value or
// --name=value, and bad combinations name the flag.
func TestParseRunCommand(t *testing.T) {
	dir := t.TempDir()
	specFile := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specFile, []byte(`{"workload":"consumer","params":{"messages":7}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	ok := []struct {
		name     string
		args     []string
		workload Workload
		out      string
		json     bool
		records  int64
	}{
		{"flags after the workload", []string{"producer", "--num-records", "5", "--out", "d", "--progress", "json"}, Producer, "d", true, 5},
		{"flags before the workload", []string{"--out=d", "--progress=text", "producer", "--num-records=6"}, Producer, "d", false, 6},
		{"a spec file", []string{"--spec", specFile, "--out", "o", "--progress", "json"}, Consumer, "o", true, 7},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			cmd, err := ParseRunCommand(c.args, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if cmd.Spec.Workload != c.workload || cmd.Out != c.out || cmd.JSONProgress != c.json || cmd.Spec.NumRecords != c.records {
				t.Errorf("got workload %q out %q json %v records %d, want %q %q %v %d",
					cmd.Spec.Workload, cmd.Out, cmd.JSONProgress, cmd.Spec.NumRecords, c.workload, c.out, c.json, c.records)
			}
		})
	}
	bad := []struct {
		name  string
		args  []string
		field string // the FieldError's field, "" for a plain error
		text  string
	}{
		{"no workload", nil, "", "name a workload"},
		{"unknown workload", []string{"bogus"}, "workload", `unknown workload "bogus"`},
		{"bad progress", []string{"producer", "--progress", "xml"}, "progress", `must be text or json, got "xml"`},
		{"out without a value", []string{"producer", "--out"}, "out", "needs a value"},
		{"spec and a workload", []string{"producer", "--spec", specFile}, "spec", "takes the whole spec"},
		{"spec then a workload", []string{"--spec", specFile, "producer"}, "spec", "takes the whole spec"},
		{"spec and a flag", []string{"--spec", specFile, "--num-records", "3"}, "spec", "takes the whole spec"},
		{"a flag without a workload", []string{"--num-records", "3"}, "num-records", "needs a workload"},
		{"a workload flag the parser refuses", []string{"producer", "--num-records", "x"}, "num-records", ""},
		{"meta without =", []string{"producer", "--meta", "commit"}, "meta", "want key=value"},
		{"meta with a bad key", []string{"producer", "--meta", "Commit=x"}, "meta", `key "Commit"`},
		{"meta given twice", []string{"producer", "--meta", "commit=a", "--meta=commit=b"}, "meta", `key "commit" given twice`},
		{"meta without a value", []string{"producer", "--meta"}, "meta", "needs a value"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRunCommand(c.args, noEnv)
			if err == nil {
				t.Fatal("no error")
			}
			var fe *FieldError
			if c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field) {
				t.Errorf("error %v: want one for --%s", err, c.field)
			}
			if !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q does not say %q", err, c.text)
			}
		})
	}
	cmd, err := ParseRunCommand([]string{"--meta", "commit=abc123", "producer", "--meta=branch=trunk", "--meta", "note=a=b"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmd.Meta) != 3 || cmd.Meta["commit"] != "abc123" || cmd.Meta["branch"] != "trunk" || cmd.Meta["note"] != "a=b" {
		t.Errorf("--meta: got %v", cmd.Meta)
	}
	if cmd, err := ParseRunCommand([]string{"--spec", specFile, "--meta", "commit=x"}, noEnv); err != nil || cmd.Meta["commit"] != "x" {
		t.Errorf("--meta with --spec: %v, %v", cmd.Meta, err)
	}
	if cmd, err := ParseRunCommand([]string{"consumer", "--help"}, noEnv); !errors.Is(err, ErrHelp) || cmd.Workload != Consumer {
		t.Errorf("consumer --help: %v, workload %q; want ErrHelp for consumer", err, cmd.Workload)
	}
	if _, err := ParseRunCommand([]string{"--server-only", "x"}, noEnv); err == nil {
		t.Error("an unknown flag without a workload was accepted")
	}
}

// TestParseCommandFlags: kbench run's own flags alone, for kbench run
// omb; --spec, a workload's flag and a bare argument are refused.
func TestParseCommandFlags(t *testing.T) {
	c, err := ParseCommandFlags([]string{"--out", "dir", "--meta", "commit=abc", "--progress=json", "--server", "http://k:8080"})
	if err != nil || c.Out != "dir" || c.Meta["commit"] != "abc" || !c.JSONProgress || c.Server != "http://k:8080" {
		t.Errorf("%+v, %v", c, err)
	}
	for _, args := range [][]string{{"--spec", "f.json"}, {"--threads", "2"}, {"e2e"}, {"--out"}, {"--progress", "xml"}} {
		if _, err := ParseCommandFlags(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	if !IsCommandFlag("out") || IsCommandFlag("spec") || IsCommandFlag("topic") {
		t.Errorf("IsCommandFlag: out %v, spec %v, topic %v", IsCommandFlag("out"), IsCommandFlag("spec"), IsCommandFlag("topic"))
	}
}
