package rundoc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/kbench/kbench/internal/testutil/jdktest"
	"github.com/kbench/kbench/internal/testutil/tier"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
	}{
		{"a=1\nb = 2\n", map[string]string{"a": "1", "b": "2"}},
		{"# comment\n! also\n\n  key:value\n", map[string]string{"key": "value"}},
		{"key value with spaces", map[string]string{"key": "value with spaces"}},
		{"sasl.jaas.config=org.Plain required \\\n    username=\"u\" \\\n    password=\"p\";\n",
			map[string]string{"sasl.jaas.config": `org.Plain required username="u" password="p";`}},
		{`a\=b=c`, map[string]string{"a=b": "c"}},
		{"empty=", map[string]string{"empty": ""}},
		{"bare", map[string]string{"bare": ""}},
		// Java's escapes and line ends.
		{`p=caf\u00e9 \u20ac\uD83D\uDE00`, map[string]string{"p": "café €😀"}},
		{`p=\uD83D`, map[string]string{"p": "\uFFFD"}},
		{`p=\uDE00x`, map[string]string{"p": "\uFFFDx"}},
		{`p=\uD83Dx`, map[string]string{"p": "\uFFFDx"}},
		{`p=a\rb\fc\td\ne\\`, map[string]string{"p": "a\rb\fc\td\ne\\"}},
		{"a=1\rb=2\r\nc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"a=x\\\r   y", map[string]string{"a": "xy"}},
		{"k\fv", map[string]string{"k": "v"}},
		{"\f  k = v", map[string]string{"k": "v"}},
		{`k\ ey=v`, map[string]string{"k ey": "v"}},
		// Trailing blanks: unescaped ones go (Kafka trims values),
		// escaped ones stay.
		{"k=v \t", map[string]string{"k": "v"}},
		{`k=v\t `, map[string]string{"k": "v\t"}},
		{`k=\  `, map[string]string{"k": " "}},
	}
	for _, tt := range tests {
		got, err := ParseProperties(tt.in)
		if err != nil {
			t.Errorf("ParseProperties(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseProperties(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestParsePropertiesErrors: a malformed \uXXXX is an error naming the
// line its property starts on.
func TestParsePropertiesErrors(t *testing.T) {
	for in, want := range map[string]string{
		"a=1\nb=\\u12":            `line 2: malformed \uXXXX escape "\\u12"`,
		"a=1\n\nb=\\\n  x\\u12G4": `line 3: malformed \uXXXX escape "\\u12G4"`,
		`k\uzzzz=v`:               `line 1: malformed \uXXXX escape "\\uzzzz"`,
	} {
		_, err := ParseProperties(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseProperties(%q): %v, want %q", in, err, want)
		}
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"a=1\nb:2", "k v", "x=\\\ny", "#c\n!d\n=", `a\=b=c\\`, `k=\u00e9\uD83D\uDE00`, "a\rb\fc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		props, err := ParseProperties(in)
		if err != nil {
			return
		}
		for k := range props {
			if k == "" {
				t.Fatalf("empty key from %q", in)
			}
		}
	})
}

// TestParsePropertiesJava: ParseProperties reads what Java's
// Properties.load reads, on text with every escape, line end and
// separator it knows (without unescaped trailing blanks, which kbench
// drops as Kafka does, and lone surrogates, which a Go string cannot
// hold). Skipped without a JDK (jdktest.Find).
func TestParsePropertiesJava(t *testing.T) {
	tier.Integration(t, "starts a JVM")
	java := jdktest.Find(t).Java
	texts := []string{
		"a=1\nb = 2\r\nc:3\rd 4\n  e\t=\f5",
		"# c\n! c\n\n\t\fkey:value\n",
		"sasl.jaas.config=org.Plain required \\\n    username=\"u\" \\\r\n\t password=\"p\";",
		`a\=b\:c\ d=e\\f\=g`,
		`p=caf\u00e9 \u20AC\uD83D\uDE00x`,
		`p=a\rb\fc\td\ne\\\qz`,
		"k=\\ \\\\\\\n x\\\\",
		"bare\nempty=\n  spaced  =  v",
		"ä=ö\nkey=\u00ff\u0100",
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "Load.java")
	// Prints each key and value as UTF-16 code units in hex, sorted.
	prog := `import java.io.*; import java.nio.charset.StandardCharsets; import java.util.*;
public class Load { public static void main(String[] a) throws Exception {
  for (int i = 0; i < a.length; i++) {
    Properties p = new Properties();
    try (Reader in = new InputStreamReader(new FileInputStream(a[i]), StandardCharsets.UTF_8)) { p.load(in); }
    for (String k : new TreeSet<>(p.stringPropertyNames())) System.out.println((i + 1) + " " + hex(k) + " " + hex(p.getProperty(k)));
  } }
  static String hex(String s) { StringBuilder b = new StringBuilder("x"); for (char c : s.toCharArray()) b.append(String.format("%04x", (int) c)); return b.toString(); } }`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{src}
	for i, text := range texts {
		path := filepath.Join(dir, fmt.Sprintf("%d.properties", i+1))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	out, err := exec.Command(java, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	hex := func(s string) string {
		var b strings.Builder
		b.WriteString("x")
		for _, u := range utf16.Encode([]rune(s)) {
			fmt.Fprintf(&b, "%04x", u)
		}
		return b.String()
	}
	var want []string
	for i, text := range texts {
		props, err := ParseProperties(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		// Java sorts by UTF-16 code units: the same order as Go's bytes
		// for these keys (no characters beyond the BMP).
		sort.Strings(keys)
		for _, k := range keys {
			want = append(want, fmt.Sprintf("%d %s %s", i+1, hex(k), hex(props[k])))
		}
	}
	if got := strings.Fields(strings.ReplaceAll(string(out), "\n", " ")); strings.Join(got, " ") != strings.Join(strings.Fields(strings.Join(want, " ")), " ") {
		t.Errorf("Java read\n%s\nkbench read\n%s", out, strings.Join(want, "\n"))
	}
}
