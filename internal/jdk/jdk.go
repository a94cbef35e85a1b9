// Package jdk finds the Java tools kbench drives: java (to run the JVM
// side of a benchmark), javac (to compile kbench's Java sources on first
// use) and jfr (to read Java Flight Recorder recordings). The JDK is
// optional: callers refuse the Java features with Find's error, which
// says what to install, and everything else works without it.
package jdk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tools are the JDK commands Find looks for, in the order of JDK's fields.
var Tools = []string{"java", "javac", "jfr"}

// JDK holds the absolute paths of the tools of one JDK.
type JDK struct {
	Java  string
	Javac string
	JFR   string
}

// Install is what Find's error tells a user to do when a tool is missing.
const Install = "install a JDK 17 or later (Debian: apt-get install openjdk-17-jdk-headless) or pass --java-home DIR"

// ErrNotFound is wrapped by Find's error when a tool is missing, so that
// callers can tell "no JDK" from other failures with errors.Is.
var ErrNotFound = errors.New("jdk: not found")

// NotFoundError names the tools Find could not find and where it looked.
type NotFoundError struct {
	// Missing are the tools not found, e.g. ["javac", "jfr"].
	Missing []string
	// Where is "PATH" or the --java-home directory's bin.
	Where string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("jdk: %s not found in %s: %s", strings.Join(e.Missing, ", "), e.Where, Install)
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Find returns the tools of the JDK at javaHome (its bin directory), or,
// when javaHome is empty, the first java, javac and jfr on PATH. Only
// regular executable files count. A missing tool gives a *NotFoundError
// naming every missing tool and what to install.
func Find(javaHome string) (JDK, error) {
	paths := make([]string, len(Tools))
	var missing []string
	where := "PATH"
	if javaHome != "" {
		home, err := filepath.Abs(javaHome)
		if err != nil {
			return JDK{}, fmt.Errorf("jdk: --java-home %q: %w", javaHome, err)
		}
		if st, err := os.Stat(home); err != nil || !st.IsDir() {
			return JDK{}, fmt.Errorf("jdk: --java-home %q is not a directory: %w", javaHome, errOrNotDir(err))
		}
		where = filepath.Join(home, "bin")
		for i, tool := range Tools {
			p := filepath.Join(where, tool)
			if executable(p) {
				paths[i] = p
			} else {
				missing = append(missing, tool)
			}
		}
	} else {
		for i, tool := range Tools {
			p, err := exec.LookPath(tool)
			if err == nil {
				p, err = filepath.Abs(p)
			}
			if err != nil {
				missing = append(missing, tool)
				continue
			}
			paths[i] = p
		}
	}
	if len(missing) > 0 {
		return JDK{}, &NotFoundError{Missing: missing, Where: where}
	}
	return JDK{Java: paths[0], Javac: paths[1], JFR: paths[2]}, nil
}

func errOrNotDir(err error) error {
	if err != nil {
		return err
	}
	return fs.ErrInvalid
}

// executable reports whether p is a regular file someone may execute
// (following symlinks: Debian's /usr/bin/java is one).
func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
