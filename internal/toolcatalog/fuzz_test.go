package toolcatalog

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/jdktest"
	"github.com/kbench/kbench/internal/testutil/tier"
)

// FuzzWriteConfig: whatever a property's key and value hold (a password
// may hold any character), the file WriteConfig writes reads back as a
// Java properties file to exactly what was written. The reader is
// rundoc's, which reads Java's escapes but drops a value's unescaped
// trailing blanks (as Kafka trims values): values ending in a space,
// which WriteConfig leaves unescaped, are skipped.
func FuzzWriteConfig(f *testing.F) {
	f.Add("sasl.jaas.config", `m required password="p\a=ss";`)
	f.Add("k", " lead\ttab\nline")
	f.Add("a=b:c", "#!x")
	f.Add("ssl.key.password", `\`)
	f.Fuzz(func(t *testing.T, key, value string) {
		if !utf8.ValidString(key) || !utf8.ValidString(value) {
			if _, err := WriteConfig(t.TempDir(), map[string]string{key: value}); err == nil {
				t.Errorf("%q=%q: not UTF-8, and written", key, value)
			}
			return
		}
		if key == "" || strings.HasSuffix(value, " ") && value != " " {
			t.Skip() // Java keeps them (TestWriteConfigJava); rundoc, as Kafka, drops them
		}
		dir := t.TempDir()
		path, err := WriteConfig(dir, map[string]string{key: value})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, ConfigFileName))
		if err != nil || path == "" {
			t.Fatal(err)
		}
		back, err := rundoc.ParseProperties(string(data))
		if err != nil {
			t.Fatalf("%q does not parse: %v", data, err)
		}
		if len(back) != 1 || back[key] != value {
			t.Errorf("%q=%q read back as %q", key, value, back)
		}
	})
}

// FuzzParseOffered: what the workers table holds never panics the reader,
// and what a set offers reads back.
func FuzzParseOffered(f *testing.F) {
	f.Add("jp:producer-perf-test,jc:consumer-perf-test")
	f.Add(",,:x:y")
	f.Fuzz(func(t *testing.T, text string) {
		for name, kind := range ParseOffered(text) {
			if !rundoc.ValidToolName(name) || kind.Workload() == "" {
				t.Errorf("%q gave %q=%q", text, name, kind)
			}
		}
	})
}

// TestWriteConfigJava: Kafka's tools read the file with Java's
// Properties.load of a stream (ISO 8859-1), which must see exactly the
// values written: passwords with quotes, backslashes, blanks, line
// breaks and characters beyond ASCII and beyond the BMP. Skipped without
// a JDK (jdktest.Find).
func TestWriteConfigJava(t *testing.T) {
	tier.Integration(t, "starts a JVM")
	java := jdktest.Find(t).Java
	props := map[string]string{"sasl.jaas.config": `m required password="ä\"\\b€ 😀";`, "k": " lead\ttab\r\nline\f", "a=b:c d": "#!x  "}
	dir := t.TempDir()
	path, err := WriteConfig(dir, props)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "Dump.java")
	// Prints each key and value as UTF-16 code units in hex, sorted.
	prog := `import java.io.*; import java.util.*;
public class Dump { public static void main(String[] a) throws Exception {
  Properties p = new Properties(); try (InputStream in = new FileInputStream(a[0])) { p.load(in); }
  for (String k : new TreeSet<>(p.stringPropertyNames())) { System.out.println(hex(k) + " " + hex(p.getProperty(k))); } }
  static String hex(String s) { StringBuilder b = new StringBuilder(); for (char c : s.toCharArray()) b.append(String.format("%04x", (int) c)); return b.toString(); } }`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(java, src, path).CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	hex := func(s string) string {
		var b strings.Builder
		for _, u := range utf16.Encode([]rune(s)) {
			fmt.Fprintf(&b, "%04x", u)
		}
		return b.String()
	}
	var want []string
	for _, k := range sortedKeys(props) {
		want = append(want, hex(k)+" "+hex(props[k]))
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(want, "\n") {
		t.Errorf("Java read\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
