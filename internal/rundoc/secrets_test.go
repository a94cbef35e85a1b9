package rundoc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestRedact (moved from internal/kafkasec with RedactProps): secret values
// become "[redacted]", JAAS text keeps all but its secret options, and
// the input is left alone.
func TestRedact(t *testing.T) {
	t.Parallel()
	in := map[string]string{
		"bootstrap.servers": "broker:9092",
		"security.protocol": "SASL_SSL",
		"sasl.mechanism":    "SCRAM-SHA-512",
		"sasl.username":     "alice",
		"sasl.password":     "pw-1",
		"sasl.jaas.config":  `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="p\"w;2" serviceName=kafka;`,
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": `x.ScramLoginModule required password=pw-3 username='bob';`,
		"ssl.key.password":                    "pw-4",
		"ssl.keystore.password":               "pw-5",
		"ssl.truststore.password":             "pw-6",
		"ssl.keystore.key":                    "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----",
		"ssl.key.pem":                         "-----BEGIN PRIVATE KEY-----\nMIIC\n-----END PRIVATE KEY-----",
		"ssl.keystore.location":               "/etc/kafka/client.pem",
		"ssl.truststore.certificates":         "-----BEGIN CERTIFICATE-----\nMIID\n-----END CERTIFICATE-----",
		"client.Secret":                       "pw-7",
		"sasl.oauthbearer.token.endpoint.url": "https://idp/token",
		"my.API_TOKEN":                        "pw-8",
		"basic.auth.credentials":              "pw-9",
		"empty.password":                      "",
		"broken.sasl.jaas.config":             `x.PlainLoginModule required password="pw-10`,
		"comment.sasl.jaas.config":            "x.PlainLoginModule required /* c */ password = // c\n 'pw-11' ; ",
	}
	want := map[string]string{
		"bootstrap.servers": "broker:9092",
		"security.protocol": "SASL_SSL",
		"sasl.mechanism":    "SCRAM-SHA-512",
		"sasl.username":     "alice",
		"sasl.password":     "[redacted]",
		"sasl.jaas.config":  `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="[redacted]" serviceName=kafka;`,
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": `x.ScramLoginModule required password="[redacted]" username='bob';`,
		"ssl.key.password":                    "[redacted]",
		"ssl.keystore.password":               "[redacted]",
		"ssl.truststore.password":             "[redacted]",
		"ssl.keystore.key":                    "[redacted]",
		"ssl.key.pem":                         "[redacted]",
		"ssl.keystore.location":               "/etc/kafka/client.pem",
		"ssl.truststore.certificates":         "-----BEGIN CERTIFICATE-----\nMIID\n-----END CERTIFICATE-----",
		"client.Secret":                       "[redacted]",
		"sasl.oauthbearer.token.endpoint.url": "[redacted]",
		"my.API_TOKEN":                        "[redacted]",
		"basic.auth.credentials":              "[redacted]",
		"empty.password":                      "",
		"broken.sasl.jaas.config":             "[redacted]",
		"comment.sasl.jaas.config":            "x.PlainLoginModule required /* c */ password = // c\n \"[redacted]\" ; ",
	}
	before := fmt.Sprint(in)
	got := RedactProps(in)
	if !reflect.DeepEqual(got, want) {
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("%s:\n got  %q\n want %q", k, got[k], want[k])
			}
		}
		if len(got) != len(want) {
			t.Errorf("got %d keys, want %d", len(got), len(want))
		}
	}
	if fmt.Sprint(in) != before {
		t.Error("RedactProps modified its input")
	}
	for i := 1; i <= 11; i++ {
		if s := fmt.Sprint(got); strings.Contains(s, fmt.Sprintf("pw-%d", i)) {
			t.Errorf("pw-%d survived redaction", i)
		}
	}
	if RedactProps(nil) != nil {
		t.Error("RedactProps(nil) != nil")
	}
	// Every secret internal/kafkasec reads is redacted (its tests check
	// the same against its own property names).
	for _, k := range []string{"sasl.password", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password", "ssl.keystore.key", "ssl.key.pem"} {
		if RedactProps(map[string]string{k: "x"})[k] != Redacted {
			t.Errorf("%s is not redacted", k)
		}
	}
}
