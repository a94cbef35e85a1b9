package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeClusters: --cluster NAME=FILE (repeatable, and KBENCH_CLUSTER's
// comma list, which the flags add to) names clusters whose files are read
// and checked before anything is opened; a bad one exits 2 naming the
// flag or variable and the file, and never prints a property's value.
func TestServeClusters(t *testing.T) {
	const password = "Srv-8a7b6c-secret"
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jaas := `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" password="` + password + `";` + "\n"
	good := write("good.properties", "bootstrap.servers=kafka-1:9093\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+jaas)
	noServers := write("noservers.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+jaas)
	tuning := write("tuning.properties", "bootstrap.servers=kafka-1:9093\nacks=all\n"+jaas)
	unknown := write("unknown.properties", "bootstrap.servers=kafka-1:9093\nssl.made.up="+password+"\n")
	badMech := write("badmech.properties", "bootstrap.servers=kafka-1:9093\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\n"+jaas)
	badJAAS := write("badjaas.properties", "bootstrap.servers=kafka-1:9093\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" password="`+password+"\n")
	// An operator's file is read on this machine, so its TLS files are
	// read at start too (runner.ValidateWithFiles), as a run would.
	tlsDevice := write("tlsdevice.properties", "bootstrap.servers=kafka-1:9093\nsecurity.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=/dev/zero\n")

	var served []serveSettings
	serveWith = func(_ context.Context, s serveSettings, _, _ io.Writer) int {
		served = append(served, s)
		return 0
	}
	t.Cleanup(func() { serveWith = serve })
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "KBENCH_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	for _, tc := range []struct {
		name    string
		env     string
		args    []string
		names   []string // the clusters named, when it serves
		wantErr []string
	}{
		{name: "flags", args: []string{"--cluster", "lab=" + good, "--cluster", "prod=" + good}, names: []string{"lab", "prod"}},
		{name: "variable and flag", env: "lab=" + good, args: []string{"--cluster", "prod=" + good}, names: []string{"lab", "prod"}},
		{name: "no bootstrap.servers", args: []string{"--cluster", "lab=" + noServers}, wantErr: []string{"--cluster lab=" + noServers, "bootstrap.servers is missing"}},
		{name: "unreadable", args: []string{"--cluster", "lab=" + filepath.Join(dir, "absent")}, wantErr: []string{"--cluster lab=" + filepath.Join(dir, "absent"), "cannot read it"}},
		{name: "a property that is no connection's", args: []string{"--cluster", "lab=" + tuning}, wantErr: []string{"lab=" + tuning, "acks"}},
		{name: "unknown property", args: []string{"--cluster", "lab=" + unknown}, wantErr: []string{"lab=" + unknown, "ssl.made.up"}},
		{name: "a TLS file that is a device", args: []string{"--cluster", "lab=" + tlsDevice}, wantErr: []string{"lab=" + tlsDevice, "ssl.truststore.location", "not a regular file"}},
		{name: "invalid mechanism", args: []string{"--cluster", "lab=" + badMech}, wantErr: []string{"lab=" + badMech, "sasl.mechanism"}},
		{name: "malformed JAAS", args: []string{"--cluster", "lab=" + badJAAS}, wantErr: []string{"lab=" + badJAAS, "JAAS"}},
		{name: "no file", args: []string{"--cluster", "lab"}, wantErr: []string{"--cluster", "NAME=FILE"}},
		{name: "bad name", args: []string{"--cluster", "a b=" + good}, wantErr: []string{"--cluster", `"a b"`}},
		{name: "twice", args: []string{"--cluster", "lab=" + good, "--cluster", "lab=" + good}, wantErr: []string{"named twice"}},
		{name: "the variable", env: "lab=" + noServers, wantErr: []string{"KBENCH_CLUSTER", "lab=" + noServers}},
		{name: "every bad value", args: []string{"--cluster", "a=" + noServers, "--cluster", "b=" + tuning},
			wantErr: []string{"--cluster a=" + noServers, "--cluster b=" + tuning}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KBENCH_CLUSTER", tc.env)
			served = nil
			var stdout, stderr bytes.Buffer
			code := Main(append([]string{"serve"}, tc.args...), &stdout, &stderr)
			if strings.Contains(stderr.String(), password) {
				t.Errorf("stderr shows the password: %q", stderr.String())
			}
			if tc.wantErr != nil {
				if code != 2 || len(served) != 0 {
					t.Fatalf("exit %d, served %d; want exit 2 before serving (stderr %q)", code, len(served), stderr.String())
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(stderr.String(), w) {
						t.Errorf("stderr %q does not say %q", stderr.String(), w)
					}
				}
				return
			}
			if code != 0 || len(served) != 1 {
				t.Fatalf("exit %d, served %d; stderr %q", code, len(served), stderr.String())
			}
			if got := served[0].Config.Clusters.Names(); strings.Join(got, ",") != strings.Join(tc.names, ",") {
				t.Errorf("names %v, want %v", got, tc.names)
			}
		})
	}
}
