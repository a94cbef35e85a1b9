package kafkasec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func TestConfigNeverShowsSecrets(t *testing.T) {
	t.Parallel()
	const pw, key = "Sup3r-Secret-Pw", "-----BEGIN PRIVATE KEY-----\nKEYMATERIAL\n-----END PRIVATE KEY-----"
	c := Config{Protocol: SASLSSL, Mechanism: ScramSHA256, Username: "alice", Password: pw,
		CAFile: "/ca.pem", CertPEM: "CERT", KeyPEM: key, ServerName: "kafka", SkipHostnameVerification: true}

	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	jsPtr, _ := json.Marshal(&c)
	jsNested, _ := json.Marshal(map[string]any{"sec": c, "list": []Config{c}})

	var logBuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("cfg", "c", c, "p", &c)
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("cfg", "c", c)
	log.New(&logBuf, "", 0).Printf("%v %+v %#v", c, c, &c)

	outputs := map[string]string{
		"json": string(js), "json ptr": string(jsPtr), "json nested": string(jsNested),
		"String": c.String(), "GoString": c.GoString(), "log": logBuf.String(),
		"error wrap":         fmt.Errorf("with %v", c).Error(),
		"struct with Config": fmt.Sprintf("%+v", struct{ C Config }{c}),
	}
	// Every verb goes through Format. (Not %p on a non-pointer: fmt
	// rejects it before looking at methods and dumps the raw fields, which
	// no type can prevent; go vet reports that misuse.)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%X", "%t", "%T", "%10.3v"} {
		outputs[verb] = fmt.Sprintf(verb, c)
		outputs[verb+" ptr"] = fmt.Sprintf(verb, &c)
	}
	outputs["%p ptr"] = fmt.Sprintf("%p", &c)
	for name, s := range outputs {
		if strings.Contains(s, pw) || strings.Contains(s, "KEYMATERIAL") {
			t.Errorf("%s leaks a secret: %s", name, s)
		}
	}
	wantString := `{protocol=SASL_SSL mechanism=SCRAM-SHA-256 username="alice" password=[redacted] caFile="/ca.pem" certPEM=<4 bytes> keyPEM=[redacted] serverName="kafka" skipHostnameVerification=true}`
	if got := c.String(); got != wantString {
		t.Errorf("String() =\n %s\nwant\n %s", got, wantString)
	}
	if got := fmt.Sprintf("%#v", c); got != "kafkasec.Config"+wantString {
		t.Errorf("%%#v = %s", got)
	}
	wantJSON := `{"protocol":"SASL_SSL","mechanism":"SCRAM-SHA-256","username":"alice","caFile":"/ca.pem","certPEM":"CERT","serverName":"kafka","skipHostnameVerification":true}`
	if string(js) != wantJSON {
		t.Errorf("json = %s\nwant   %s", js, wantJSON)
	}
	if got := (Config{}).String(); got != "{protocol=PLAINTEXT}" {
		t.Errorf("zero String() = %s", got)
	}
}

// Config literals get the same validation as FromProperties, with errors
// naming the fields, and never the password.
func TestConfigValidation(t *testing.T) {
	t.Parallel()
	const pw = "Secret-\u0007-Pw"
	tests := []struct {
		c    Config
		want string
	}{
		{Config{Protocol: "TLS"}, `security.protocol "TLS" is not supported; supported: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL`},
		{Config{Protocol: SASLSSL, Username: "u", Password: pw}, "needs sasl.mechanism"},
		{Config{Protocol: SASLSSL, Mechanism: "GSSAPI", Username: "u", Password: pw}, "GSSAPI (Kerberos) is not supported by kafka-go"},
		{Config{Protocol: SASLSSL, Mechanism: Plain, Password: pw}, "needs a username"},
		{Config{Protocol: SASLSSL, Mechanism: Plain, Username: "u"}, "needs a password"},
		{Config{Protocol: SASLSSL, Mechanism: ScramSHA256, Username: "u", Password: pw}, "not valid SASLprep"},
		{Config{Mechanism: Plain, Username: "u", Password: pw}, "does not use SASL"},
		{Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "u", Password: "p", CAFile: "/x"}, "CAFile is set but security.protocol=SASL_PLAINTEXT does not use TLS"},
		{Config{Protocol: SSL, CAFile: "/nonexistent/ca.pem"}, "CAFile: cannot open the file: no such file or directory"},
		{Config{Protocol: SSL, CAPEM: "junk"}, "CAPEM: no PEM data found"},
		{Config{Protocol: SSL, KeyPEM: "k"}, "KeyPEM is set but no client certificate is; set CertFile too"},
	}
	for _, tc := range tests {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%v) = %v, want %q", tc.c, err, tc.want)
			continue
		}
		if _, derr := tc.c.Dialer("id", time.Second); derr == nil || derr.Error() != err.Error() {
			t.Errorf("Dialer error %v differs from Validate error %v", derr, err)
		}
		if _, terr := tc.c.Transport("id", time.Second); terr == nil || terr.Error() != err.Error() {
			t.Errorf("Transport error %v differs from Validate error %v", terr, err)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("error leaks the password: %v", err)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
	if tc, err := (Config{}).TLSConfig(); tc != nil || err != nil {
		t.Errorf("TLSConfig of PLAINTEXT = %v, %v", tc, err)
	}
}

func TestTransportIsFreshEachCall(t *testing.T) {
	t.Parallel()
	c := Config{Protocol: SASLPlaintext, Mechanism: Plain, Username: "u", Password: "p"}
	a, err := c.Transport("id", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Transport("id", time.Second)
	if a == b {
		t.Fatal("Transport returned the same pointer twice")
	}
	if a.ClientID != "id" || a.DialTimeout != time.Second || a.SASL == nil || a.SASL.Name() != "PLAIN" || a.TLS != nil || a.Dial == nil {
		t.Errorf("unexpected transport %+v", a)
	}
	// Dial and DialFunc are set without TLS too: they watch for brokers
	// that never answer (silence.go).
	d, _ := c.Dialer("id", 2*time.Second)
	if d.ClientID != "id" || d.Timeout != 2*time.Second || d.SASLMechanism == nil || d.TLS != nil || d.DialFunc == nil {
		t.Errorf("unexpected dialer %+v", d)
	}
}

func TestExplainLeavesOtherErrorsAlone(t *testing.T) {
	t.Parallel()
	other := fmt.Errorf("dial tcp 127.0.0.1:1: connect: connection refused")
	sasl := Config{Protocol: SASLSSL, Mechanism: Plain, Username: "u", Password: "longpassword"}
	if Explain(nil, sasl) != nil {
		t.Error("Explain(nil) != nil")
	}
	if got := Explain(other, sasl); got != other {
		t.Errorf("Explain changed %v into %v", other, got)
	}
	if got := Explain(other, Config{}); got != other {
		t.Errorf("Explain changed %v into %v", other, got)
	}
	// A Writer's WriteErrors is looked into.
	werr := kafka.WriteErrors{nil, io.ErrUnexpectedEOF, io.ErrUnexpectedEOF}
	if got := Explain(werr, sasl); !errors.Is(got, ErrAuthentication) || !strings.Contains(got.Error(), `as user "u" failed`) {
		t.Errorf("Explain(WriteErrors) = %v", got)
	}
	// A (hypothetical) original error quoting the password is scrubbed.
	leaky := fmt.Errorf("broker said longpassword is wrong: %w", fmt.Errorf("unexpected EOF"))
	if got := Explain(leaky, sasl).Error(); strings.Contains(got, "longpassword") {
		t.Errorf("Explain leaks: %s", got)
	}
}
