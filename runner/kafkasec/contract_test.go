package kafkasec

import (
	"slices"
	"testing"

	"github.com/kbench/kbench/rundoc"
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
