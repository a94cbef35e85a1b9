package rundoc

import "strings"

// EmbeddedBrokerNote says what a run on kbench's embedded broker can and
// cannot measure. The run, comparison and new-run pages and the Markdown
// export show it (issue 23): figures from one in-memory broker read like
// a cluster's, but the costs that acks, replication and the disk add on
// a cluster are simply absent.
const EmbeddedBrokerNote = "The embedded broker is one in-memory broker (kfake) on the machine that runs kbench: no disk, no replicas, no network between brokers. " +
	"acks, replication and durability settings cannot show their cost on it; measure those against a real cluster."

// OnEmbeddedBroker reports whether the run talked to kbench's embedded
// broker, as its environment recorded: the target kind, or for runs
// recorded before the target was, the broker line. False when the run
// has no environment (queued, imported without one).
func (r Run) OnEmbeddedBroker() bool {
	e := r.Environment
	if e == nil {
		return false
	}
	if e.Target != nil && e.Target.Kind != "" {
		return e.Target.Kind == TargetEmbedded
	}
	return strings.HasPrefix(e.Broker, "embedded")
}
