package kafkasec

import (
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestContractLists: the form offers rundoc's lists of protocols and
// mechanisms (pages link no Kafka client); they must be exactly what this
// package implements.
func TestContractLists(t *testing.T) {
	var protocols, mechanisms []string
	for _, p := range Protocols {
		protocols = append(protocols, string(p))
	}
	for _, m := range Mechanisms {
		mechanisms = append(mechanisms, string(m))
	}
	if !slices.Equal(protocols, rundoc.SecurityProtocols()) {
		t.Errorf("kafkasec implements protocols %q, the contract offers %q", protocols, rundoc.SecurityProtocols())
	}
	if !slices.Equal(mechanisms, rundoc.SASLMechanisms()) {
		t.Errorf("kafkasec implements mechanisms %q, the contract offers %q", mechanisms, rundoc.SASLMechanisms())
	}
}

// TestSecretPropertiesRedacted: every secret property this package reads
// is one rundoc.RedactProps hides, so no stored spec, log or page shows it.
func TestSecretPropertiesRedacted(t *testing.T) {
	for _, k := range []string{PropSASLPassword, PropKeyPassword, PropKeystorePassword, PropTruststorePassword, PropKeystoreKey, PropKeyPEM} {
		if rundoc.RedactProps(map[string]string{k: "x"})[k] != rundoc.Redacted {
			t.Errorf("%s is not redacted", k)
		}
	}
	jaas := PropSASLJAASConfig
	if got := rundoc.RedactProps(map[string]string{jaas: `m required password="pw-1";`})[jaas]; strings.Contains(got, "pw-1") {
		t.Errorf("%s keeps its password: %q", jaas, got)
	}
}
