package rundoc

import (
	"slices"
	"strings"
)

// Broker-line prefixes of the targets a run records without naming their
// kind (runs before environment.target, tool runs): runner.run,
// runner/sink.go and runner/toolrun.go write them.
const (
	brokerEmbeddedPrefix = "embedded"
	brokerSinkPrefix     = "kbench write-path sink"
	brokerToolTarget     = "the run's target: "
	brokerToolCluster    = "the named cluster "
)

// TargetIdentity is what a run's target is, for telling whether two runs
// measured against the same thing: the embedded broker or the write-path
// sink with its settings, or a cluster by its name (serve's --cluster) and
// its bootstrap servers as a set (sorted, duplicates dropped). It never
// holds the address an embedded broker or sink happened to listen on (a
// port the run picked), nor the order servers were listed in. A broker line
// that names no target (imports: "imported: … does not print its
// environment") is returned as it is. "" when the run recorded none.
func TargetIdentity(e *Environment) string {
	if e == nil {
		return ""
	}
	broker := strings.TrimSpace(e.Broker)
	kind, cluster := "", ""
	if e.Target != nil {
		kind, cluster = e.Target.Kind, e.Target.Cluster
	}
	switch {
	case strings.HasPrefix(broker, brokerToolTarget):
		kind, broker = TargetCluster, strings.TrimPrefix(broker, brokerToolTarget)
	case strings.HasPrefix(broker, brokerToolCluster):
		kind, cluster, broker = TargetCluster, strings.TrimPrefix(broker, brokerToolCluster), ""
	case kind != "":
	case broker == "":
		return ""
	case strings.HasPrefix(broker, brokerEmbeddedPrefix):
		kind = TargetEmbedded
	case strings.HasPrefix(broker, brokerSinkPrefix):
		kind = TargetSink
	case strings.HasPrefix(broker, "imported") || strings.HasPrefix(broker, "run by kbench exec"):
		return broker
	default:
		kind = TargetCluster
	}
	switch kind {
	case TargetEmbedded, TargetSink:
		// "embedded kfake (own process, log.segment.bytes=1048576) at
		// 127.0.0.1:46855": what follows the last " at " is the address.
		if i := strings.LastIndex(broker, " at "); i >= 0 && !strings.ContainsAny(broker[i+4:], " ()") {
			broker = broker[:i]
		}
		broker = strings.TrimSuffix(broker, " at") // an address left empty
		if broker == "" {
			return kind
		}
		return broker
	case TargetCluster:
		servers := slices.Compact(slices.Sorted(slices.Values(SplitServers(broker))))
		s := "cluster"
		if cluster != "" {
			s += " " + cluster
		}
		if len(servers) > 0 {
			s += " (" + strings.Join(servers, ",") + ")"
		}
		return s
	}
	return kind
}
