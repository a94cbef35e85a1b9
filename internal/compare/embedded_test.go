package compare

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestEmbeddedBrokerNote (issue 23, item 19): a comparison of runs on the
// embedded broker says, in its Markdown export, that it is one in-memory
// broker where acks and replication cannot show their cost; a
// comparison of cluster runs says nothing of the kind.
func TestEmbeddedBrokerNote(t *testing.T) {
	mk := func(id uint, env *rundoc.Environment) rundoc.Run {
		r := run(id, "r", metric("record-send-rate", 1000+float64(id), "records/s", HigherIsBetter))
		r.Environment = env
		return r
	}
	embedded := &rundoc.Environment{Broker: "embedded (kfake) at 127.0.0.1:40001", Target: &rundoc.Target{Kind: rundoc.TargetEmbedded}}
	legacy := &rundoc.Environment{Broker: "embedded (kfake) at 127.0.0.1:40002"} // recorded before the target was
	cluster := &rundoc.Environment{Broker: "kafka-1:9092", Target: &rundoc.Target{Kind: rundoc.TargetCluster}}
	tests := []struct {
		name string
		envs []*rundoc.Environment
		want string // "" for no note
	}{
		{"all embedded", []*rundoc.Environment{embedded, legacy}, "> **Embedded broker.** All runs ran on the embedded broker. The embedded broker is one in-memory broker"},
		{"one embedded", []*rundoc.Environment{cluster, embedded}, "> **Embedded broker.** Run #2 ran on the embedded broker."},
		{"cluster", []*rundoc.Environment{cluster, cluster}, ""},
		{"unknown", []*rundoc.Environment{nil, nil}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cols []Column
			for i, env := range tt.envs {
				cols = append(cols, Column{Name: string(rune('A' + i)), Runs: []rundoc.Run{mk(uint(i+1), env)}})
			}
			tab, err := Build(cols, Options{})
			if err != nil {
				t.Fatal(err)
			}
			md := Markdown(tab, Meta{})
			if tt.want == "" {
				if strings.Contains(md, "mbedded broker") {
					t.Errorf("Markdown mentions the embedded broker:\n%s", md)
				}
				return
			}
			if !strings.Contains(md, tt.want) || !strings.Contains(md, "acks, replication and durability settings cannot show their cost") {
				t.Errorf("Markdown lacks %q:\n%s", tt.want, md)
			}
		})
	}
}
