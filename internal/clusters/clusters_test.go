package clusters

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestPropsReadsTheFileAgain: Props reads the file when asked, so an edit
// applies and a file that became invalid is an error naming the cluster
// and its file, without a property's value.
func TestPropsReadsTheFileAgain(t *testing.T) {
	const password = "Unit-1a2b3c"
	file := filepath.Join(t.TempDir(), "lab.properties")
	write := func(text string) {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("bootstrap.servers=a:9092\nsasl.password=" + password + "\n")
	set, err := Parse([]string{"lab=" + file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Names(); len(got) != 1 || got[0] != "lab" || !set.Has("lab") || set.Has("prod") || set.File("lab") != file {
		t.Fatalf("names %v", got)
	}
	write("bootstrap.servers=b:9092\nsasl.password=" + password + "\n")
	props, err := set.Props("lab")
	if err != nil || props["bootstrap.servers"] != "b:9092" || props["sasl.password"] != password {
		t.Errorf("after an edit: %v %v", props, err)
	}
	write("sasl.password=" + password + "\n")
	_, err = set.Props("lab")
	if err == nil || !strings.Contains(err.Error(), "cluster lab ("+file+")") || strings.Contains(err.Error(), password) {
		t.Errorf("invalid file: %v", err)
	}
	os.Remove(file)
	if _, err := set.Props("lab"); err == nil || !strings.Contains(err.Error(), "cannot read it") {
		t.Errorf("removed file: %v", err)
	}
	var unknown *UnknownError
	if _, err := set.Props("prod"); !errors.As(err, &unknown) || !strings.Contains(err.Error(), "the clusters named here are lab") {
		t.Errorf("unknown cluster: %v", err)
	}
}

// TestNilSetNamesNone: no --cluster gives a nil set, which names none.
func TestNilSetNamesNone(t *testing.T) {
	set, err := Parse(nil, nil)
	if err != nil || set != nil {
		t.Fatalf("Parse(nil) = %v, %v", set, err)
	}
	if set.Has("lab") || set.Names() != nil {
		t.Errorf("a nil set names clusters")
	}
	if _, err := set.Props("lab"); err == nil || !strings.Contains(err.Error(), "names no clusters") {
		t.Errorf("Props on a nil set: %v", err)
	}
}

// TestCheckMessagesRedacted: a check's message quoting a secret value
// reaches the caller with it redacted.
func TestCheckMessagesRedacted(t *testing.T) {
	const password = "Quoted-9z8y7x"
	file := filepath.Join(t.TempDir(), "lab.properties")
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + password + `";`
	os.WriteFile(file, []byte("bootstrap.servers=a:9092\nsasl.jaas.config="+jaas+"\n"), 0o600)
	quoting := func(s *rundoc.Spec, errs *rundoc.FieldErrors) {
		errs.Add("producer-props", "sasl.jaas.config: %q is wrong (password %s)", s.Props["sasl.jaas.config"], password)
	}
	_, err := Parse([]string{"lab=" + file}, quoting)
	if err == nil || strings.Contains(err.Error(), password) || !strings.Contains(err.Error(), rundoc.Redacted) {
		t.Errorf("error %v", err)
	}
}
