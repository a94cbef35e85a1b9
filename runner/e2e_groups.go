package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// Subscriptions: e2e rate mode's consumer groups (--subscriptions,
// --consumers-per-subscription), as OMB's Kafka driver consumes. Each
// subscription is a consumer group of its own, new for the run, reading
// every topic of the run from its start (the topics are the run's own,
// created fresh: --topics); its members are kafka-go Readers, the
// group's protocol sharing the partitions among them. So each record is
// received once per subscription, and each receipt is timed.

// e2eGroupsReady bounds the wait for every group to hold every
// partition before the producer starts (and before the consumer workload's
// subscriptions count a record).
const e2eGroupsReady = 60 * time.Second

// groupsPoll is how often waitGroups asks the broker about the groups:
// the consumer workload's rebalance-time with subscriptions is known to
// about this.
const groupsPoll = 10 * time.Millisecond

// e2eGroups are the run's subscriptions' members.
type e2eGroups struct {
	gate    *consumerGate
	members []*e2eMember
	groups  []string
	base    time.Time
	es      *e2eStats
}

type e2eMember struct {
	sub     int
	reader  *kafka.Reader
	lastErr atomic.Pointer[string]
}

// newE2EGroups starts subs groups of members Readers each over topics,
// and waits until every group's members hold every one of the topics'
// partitions between them (DescribeGroups), so that no record is sent
// before a group can read it.
func (r *run) newE2EGroups(ctx context.Context, topics []string, partitions, subs, members int, base time.Time, es *e2eStats, gate *consumerGate) (*e2eGroups, error) {
	dialer, err := r.st.sec.Dialer(r.clientID("consumer"), r.st.setupTimeout)
	if err != nil {
		return nil, err
	}
	g := &e2eGroups{gate: gate, base: base, es: es}
	// Groups new for the run: a group's committed offsets would start it
	// elsewhere than the topics' start.
	prefix := fmt.Sprintf("kbench-e2e-%d", time.Now().UnixNano())
	// Each subscription is one group over every topic, or with
	// --groups-per-topic a group per topic, as OMB's subscriptions are.
	type groupOf struct {
		name   string
		topics []string
	}
	var all []groupOf
	for s := range subs {
		if !r.spec.GroupsPerTopic {
			all = append(all, groupOf{fmt.Sprintf("%s-sub%d", prefix, s), topics})
			continue
		}
		for i, topic := range topics {
			all = append(all, groupOf{fmt.Sprintf("%s-sub%d-t%04d", prefix, s, i), []string{topic}})
		}
	}
	for gi, grp := range all {
		group := grp.name
		s := gi % subs
		if r.spec.GroupsPerTopic {
			s = gi / len(topics)
		}
		g.groups = append(g.groups, group)
		for range members {
			m := &e2eMember{sub: s}
			m.reader = kafka.NewReader(kafka.ReaderConfig{
				Brokers:           r.brokers,
				GroupID:           group,
				GroupTopics:       grp.topics,
				Dialer:            dialer,
				MinBytes:          1,
				MaxBytes:          max(r.st.maxPartBytes, 1<<20),
				MaxWait:           r.st.maxWait,
				StartOffset:       kafka.FirstOffset,
				CommitInterval:    r.st.commitInterval,
				SessionTimeout:    r.st.sessionTimeout,
				HeartbeatInterval: r.st.heartbeat,
				GroupBalancers:    r.st.balancers,
				ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
					s := fmt.Sprintf(msg, args...)
					m.lastErr.Store(&s)
				}),
			})
			g.members = append(g.members, m)
		}
	}
	held := len(topics) * partitions
	if r.spec.GroupsPerTopic {
		held = partitions
	}
	if err := r.waitGroups(ctx, g.groups, members, held); err != nil {
		g.close()
		return nil, err
	}
	over := fmt.Sprintf("a consumer group of %d kafka-go Reader(s) (%s assignment) over the %d topic(s)", members, r.st.balancerName, len(topics))
	if r.spec.GroupsPerTopic {
		over = fmt.Sprintf("a consumer group per topic (--groups-per-topic, as OMB's subscriptions are), %d groups of %d kafka-go Reader(s) (%s assignment), %d Readers in all",
			len(topics), members, r.st.balancerName, len(g.members))
	}
	r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
		"%d subscription(s), each %s, new for the run and reading them from their start; "+
			"every record is received once per subscription and each receipt is timed (e2e-latency counts them all, as OMB's does)",
		subs, over))
	return g, nil
}

// waitGroups waits until each group is stable with members members that
// hold want partitions between them.
func (r *run) waitGroups(parent context.Context, groups []string, members, want int) error {
	client, done, err := r.adminClient()
	if err != nil {
		return err
	}
	defer done()
	ctx, cancel := context.WithTimeout(parent, e2eGroupsReady)
	defer cancel()
	last := ""
	for {
		resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: groups})
		ready := err == nil
		if err != nil {
			last = err.Error()
		} else {
			for _, gr := range resp.Groups {
				held := 0
				for _, m := range gr.Members {
					for _, t := range m.MemberAssignments.Topics {
						held += len(t.Partitions)
					}
				}
				if gr.Error != nil || gr.GroupState != "Stable" || len(gr.Members) != members || held != want {
					ready = false
					last = fmt.Sprintf("group %s is %s with %d of %d members holding %d of %d partitions", gr.GroupID, gr.GroupState, len(gr.Members), members, held, want)
					break
				}
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				// The run ended it (a cancel; the consumer's --duration or
				// --timeout), not the wait's bound.
				return fmt.Errorf("waiting for the subscriptions' groups: %w (%s)", err, last)
			}
			return fmt.Errorf("the subscriptions' groups were not ready after %v (%s)", e2eGroupsReady, last)
		case <-time.After(groupsPoll):
		}
	}
}

// start reads with every member until ctx ends; the channel gets the
// first error (nil when none) once every member stopped.
func (g *e2eGroups) start(ctx context.Context) <-chan error {
	g.gate.bind(ctx)
	out := make(chan error, 1)
	errs := make([]error, len(g.members))
	var wg sync.WaitGroup
	for i, m := range g.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.read(ctx, m)
		}()
	}
	go func() {
		wg.Wait()
		out <- errors.Join(errs...)
	}()
	return out
}

func (g *e2eGroups) read(ctx context.Context, m *e2eMember) error {
	for {
		fctx, ok := g.gate.enter(ctx)
		if !ok {
			return nil
		}
		msg, err := m.reader.FetchMessage(fctx)
		g.gate.exit()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if fctx.Err() != nil {
				continue // the gate closed: the next enter waits
			}
			if e := m.lastErr.Load(); e != nil {
				return fmt.Errorf("subscription %d: %w (last client error: %s)", m.sub, err, *e)
			}
			return fmt.Errorf("subscription %d: %w", m.sub, err)
		}
		now := time.Since(g.base)
		seq, intended, sent, ok := readStamp(msg.Value)
		if !ok || seq >= e2eMaxSeq {
			g.es.mu.Lock()
			g.es.foreign++
			g.es.mu.Unlock()
			continue
		}
		g.es.receive(m.sub, seq, len(msg.Value), now-sent, now-intended)
	}
}

// close leaves the groups, all members at once.
func (g *e2eGroups) close() {
	var wg sync.WaitGroup
	for _, m := range g.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.reader.Close()
		}()
	}
	wg.Wait()
}
