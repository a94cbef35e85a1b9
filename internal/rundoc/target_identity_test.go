package rundoc

import (
	"strings"
	"testing"
)

// TestTargetIdentity: a target is what it is, never the port an embedded
// broker or sink picked, nor the order of bootstrap servers.
func TestTargetIdentity(t *testing.T) {
	embedded := func(addr string) *Environment {
		return &Environment{Broker: "embedded kfake (own process, log.segment.bytes=1048576) at " + addr, Target: &Target{Kind: TargetEmbedded, APIVersionsFrom: addr}}
	}
	sink := func(addr string) *Environment {
		return &Environment{Broker: "kbench write-path sink (own process; answers Produce requests without storing them) at " + addr, Target: &Target{Kind: TargetSink}}
	}
	cluster := func(servers string) *Environment {
		return &Environment{Broker: servers, Target: &Target{Kind: TargetCluster}}
	}
	for _, tt := range []struct {
		name string
		a, b *Environment
		same bool
	}{
		{"embedded brokers on two ports", embedded("127.0.0.1:46855"), embedded("127.0.0.1:36135"), true},
		{"embedded, recorded before environment.target", &Environment{Broker: "embedded kfake at 127.0.0.1:1"}, &Environment{Broker: "embedded kfake at 127.0.0.1:2"}, true},
		{"sinks on two ports", sink("127.0.0.1:40001"), sink("[::1]:40002"), true},
		{"a cluster's servers in another order", cluster("kafka-2:9092,kafka-1:9092"), cluster("kafka-1:9092, kafka-2:9092,kafka-1:9092"), true},
		{"a cluster without environment.target", &Environment{Broker: "b:9092,a:9092"}, cluster("a:9092,b:9092"), true},
		{"tool runs' target lists", &Environment{Broker: "the run's target: b:9092,a:9092"}, &Environment{Broker: "the run's target: a:9092,b:9092"}, true},
		{"embedded against a cluster", embedded("127.0.0.1:9092"), cluster("127.0.0.1:9092"), false},
		{"embedded against the sink", embedded("127.0.0.1:1"), sink("127.0.0.1:1"), false},
		{"another cluster", cluster("kafka-1:9092,kafka-2:9092"), cluster("kafka-1:9092,kafka-3:9092"), false},
		{"another named cluster", &Environment{Broker: "a:9092", Target: &Target{Kind: TargetCluster, Cluster: "prod"}},
			&Environment{Broker: "a:9092", Target: &Target{Kind: TargetCluster, Cluster: "staging"}}, false},
		{"embedded broker settings changed", &Environment{Broker: "embedded kfake (own process, log.segment.bytes=1048576) at 127.0.0.1:1"},
			&Environment{Broker: "embedded kfake (own process, log.segment.bytes=2097152) at 127.0.0.1:1"}, false},
	} {
		a, b := TargetIdentity(tt.a), TargetIdentity(tt.b)
		if (a == b) != tt.same {
			t.Errorf("%s: %q vs %q, same = %v, want %v", tt.name, a, b, a == b, tt.same)
		}
	}
	for env, want := range map[*Environment]string{
		embedded("127.0.0.1:46855"): "embedded kfake (own process, log.segment.bytes=1048576)",
		cluster("b:9092,a:9092"):    "cluster (a:9092,b:9092)",
		{Broker: "imported: kafka-producer-perf-test does not print its environment"}: "imported: kafka-producer-perf-test does not print its environment",
		{Broker: "the named cluster prod"}:                                            "cluster prod",
		nil:                                                                           "",
	} {
		if got := TargetIdentity(env); got != want {
			t.Errorf("TargetIdentity(%+v) = %q, want %q", env, got, want)
		}
	}
}

// FuzzTargetIdentity: a cluster's identity does not depend on the order
// of its bootstrap servers, nor an embedded broker's on its address.
func FuzzTargetIdentity(f *testing.F) {
	f.Add("kafka-1:9092,kafka-2:9092", "127.0.0.1:46855")
	f.Add(" a , b ,a", "[::1]:1")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, servers, addr string) {
		list := SplitServers(servers)
		rev := make([]string, len(list))
		for i, s := range list {
			rev[len(list)-1-i] = s
		}
		a := TargetIdentity(&Environment{Broker: servers, Target: &Target{Kind: TargetCluster}})
		b := TargetIdentity(&Environment{Broker: strings.Join(rev, ","), Target: &Target{Kind: TargetCluster}})
		if a != b {
			t.Fatalf("%q: %q, reversed %q", servers, a, b)
		}
		if strings.ContainsAny(addr, " ()") {
			return
		}
		e := TargetIdentity(&Environment{Broker: "embedded kfake (own process) at " + addr, Target: &Target{Kind: TargetEmbedded}})
		if e != "embedded kfake (own process)" {
			t.Fatalf("address %q: identity %q", addr, e)
		}
	})
}
