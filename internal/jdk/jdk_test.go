package jdk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tools writes the named tools into dir as executable scripts (and the
// others, when given, as plain files nobody may execute).
func tools(t *testing.T, dir string, exec []string, plain []string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range exec {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range plain {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFindJavaHome: with --java-home, Find takes the tools from its bin
// directory, and a missing or non-executable tool is named in an error
// that says what to install.
func TestFindJavaHome(t *testing.T) {
	cases := []struct {
		name    string
		exec    []string
		plain   []string
		missing []string
	}{
		{"all three", []string{"java", "javac", "jfr"}, nil, nil},
		{"a JRE: no javac", []string{"java", "jfr"}, nil, []string{"javac"}},
		{"jfr not executable", []string{"java", "javac"}, []string{"jfr"}, []string{"jfr"}},
		{"empty bin", nil, nil, []string{"java", "javac", "jfr"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			bin := filepath.Join(home, "bin")
			tools(t, bin, c.exec, c.plain)
			got, err := Find(home)
			if len(c.missing) == 0 {
				want := JDK{Java: filepath.Join(bin, "java"), Javac: filepath.Join(bin, "javac"), JFR: filepath.Join(bin, "jfr")}
				if err != nil || got != want {
					t.Fatalf("Find = %+v, %v; want %+v", got, err, want)
				}
				return
			}
			var nf *NotFoundError
			if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) {
				t.Fatalf("Find = %+v, %v; want a NotFoundError", got, err)
			}
			if strings.Join(nf.Missing, ",") != strings.Join(c.missing, ",") || nf.Where != bin {
				t.Errorf("missing %v in %s; want %v in %s", nf.Missing, nf.Where, c.missing, bin)
			}
			for _, want := range append(c.missing, "openjdk-17-jdk-headless", "--java-home") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestFindJavaHomeNotADirectory: a --java-home that does not exist is
// refused with its name, not reported as three missing tools.
func TestFindJavaHomeNotADirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nojdk")
	_, err := Find(dir)
	if err == nil || !strings.Contains(err.Error(), "nojdk") || !strings.Contains(err.Error(), "--java-home") {
		t.Fatalf("Find(%q) = %v; want an error naming the directory", dir, err)
	}
}

// TestFindPath: without --java-home, Find takes the first tools on PATH,
// as absolute paths, and names the ones PATH lacks.
func TestFindPath(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	tools(t, a, []string{"java"}, nil)
	tools(t, b, []string{"java", "javac"}, nil)
	t.Setenv("PATH", a+string(os.PathListSeparator)+b)
	_, err := Find("")
	var nf *NotFoundError
	if !errors.As(err, &nf) || strings.Join(nf.Missing, ",") != "jfr" || nf.Where != "PATH" {
		t.Fatalf("Find = %v; want jfr missing from PATH", err)
	}
	tools(t, b, []string{"jfr"}, nil)
	got, err := Find("")
	want := JDK{Java: filepath.Join(a, "java"), Javac: filepath.Join(b, "javac"), JFR: filepath.Join(b, "jfr")}
	if err != nil || got != want {
		t.Fatalf("Find = %+v, %v; want %+v", got, err, want)
	}
}
