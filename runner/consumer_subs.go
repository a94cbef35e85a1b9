package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// Subscriptions of the consumer workload (--subscriptions S,
// --consumers-per-subscription C): S consumer groups of C kafka-go
// Readers each, as OMB's Kafka driver consumes, every group reading every
// topic of the run from its start. Each record is counted once per
// subscription, so a read of N records stops at N × S, each subscription
// at exactly N: its members share one budget of the records it still
// wants, as the assign mode's partition readers do. The first read waits
// until every group is Stable with every partition held (waitGroups)
// before it counts a record, and that wait is the run's rebalance time:
// like the one group consumer's join, it happens inside the read, under
// its --timeout and --duration.

// subsConsumer is the subscriptions' groups, one consumer of the run.
type subsConsumer struct {
	subs    []*subscription
	groups  []string
	created time.Time
	// wait waits until every group is ready.
	wait func(context.Context) error
	// waited is set once the first read has waited for the groups, and
	// ready is how long that took in nanoseconds, from creating the
	// groups' members to every group being ready (or to the end of a
	// read that ended first); 0 until then.
	waited bool
	ready  atomic.Int64
	// slots numbers the topics' partitions, indexing subscription.next.
	slots map[topicPartition]int
}

type topicPartition struct {
	topic     string
	partition int
}

// subscription is one consumer group and what it counted.
type subscription struct {
	id      int
	members []*subMember
	got     atomic.Int64 // records counted, every phase
	// mu orders admit's check of next and claim of the budget, so that
	// two members handed the same record never both count it.
	mu sync.Mutex
	// next holds, per partition (subsConsumer.slots), one past the offset
	// of the last record counted: one below it was counted already.
	next []int64
}

// admission is what admit decided about one record.
type admission int

const (
	admitted admission = iota // new: counted against the budget
	again                     // counted already: a re-delivery
	spent                     // new, but the budget is spent
)

// admit decides the record at offset of the slot's partition, claiming
// one record of budget when it is new. A group delivers at least once:
// when a rebalance moves a partition before its last commit reached the
// broker, the member that gets it reads again from that commit, possibly
// while the member that lost it still hands out what it had fetched. A
// partition's records come in order to each member, so an offset below
// next is such a re-delivery, never a new record.
func (s *subscription) admit(slot int, offset int64, budget *atomic.Int64) admission {
	s.mu.Lock()
	defer s.mu.Unlock()
	if offset < s.next[slot] {
		return again
	}
	if claim(budget, 1) == 0 {
		return spent
	}
	s.next[slot] = offset + 1
	return admitted
}

// subMember is one Reader of a subscription's group.
type subMember struct {
	*groupConsumer
	// pending is a record fetched once its subscription had counted every
	// record of the phase: the next phase counts it first.
	pending *kafka.Message
}

// newSubsConsumer starts subs groups of members Readers each over the
// consumer's topics, named after the run's group (GROUP-sub0, …) and so
// new for the run unless --group names an old one.
func (r *run) newSubsConsumer(ctx context.Context, subs, members int) (*subsConsumer, error) {
	offs, err := r.consumerOffsets(ctx)
	if err != nil {
		return nil, err
	}
	c := &subsConsumer{slots: make(map[topicPartition]int, len(offs)), groups: make([]string, subs), created: time.Now()}
	for i, o := range offs {
		c.slots[topicPartition{o.topic, o.partition}] = i
	}
	// The wait asks the broker through the run's admin client.
	c.wait = func(ctx context.Context) error { return r.waitGroups(ctx, c.groups, members, len(offs)) }
	for s := range subs {
		c.groups[s] = fmt.Sprintf("%s-sub%d", r.st.group, s)
		sub := &subscription{id: s, next: make([]int64, len(offs))}
		for i, o := range offs {
			sub.next[i] = o.first
		}
		for range members {
			g, err := r.newGroupConsumer(c.groups[s])
			if err != nil {
				c.close()
				return nil, err
			}
			sub.members = append(sub.members, &subMember{groupConsumer: g})
		}
		c.subs = append(c.subs, sub)
	}
	return c, nil
}

// read counts records until every subscription has target / S of them
// (target counts the receipts of every phase: a multiple of S).
func (c *subsConsumer) read(ctx context.Context, stats *consumeStats, target int64) error {
	if !c.waited {
		c.waited = true
		err := c.wait(ctx)
		c.ready.Store(int64(time.Since(c.created)))
		if err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	perSub := target / int64(len(c.subs))
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, sub := range c.subs {
		budget := &atomic.Int64{}
		budget.Store(perSub - sub.got.Load())
		// done stops the subscription's other members, waiting for
		// records, once its budget is spent.
		subCtx, done := context.WithCancel(ctx)
		defer done()
		for _, m := range sub.members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.readMember(subCtx, ctx, done, sub, m, budget, stats); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					cancel()
				}
			}()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return c.ended(ctx)
	}
	return nil
}

// ended is the error of reads that ctx ended, with a member's last
// client error, which often says why no record came.
func (c *subsConsumer) ended(ctx context.Context) error {
	for _, sub := range c.subs {
		for _, m := range sub.members {
			if m.lastErr.Load() != nil {
				return m.ended(ctx)
			}
		}
	}
	return ctx.Err()
}

// readMember counts m's records for sub until sub's budget is spent or
// ctx ends, which is no error. Its commits (enable.auto.commit) are
// queued under readCtx, which outlives ctx: see commit.
func (c *subsConsumer) readMember(ctx, readCtx context.Context, done context.CancelFunc, sub *subscription, m *subMember, budget *atomic.Int64, stats *consumeStats) error {
	for budget.Load() > 0 {
		var msg kafka.Message
		if m.pending != nil {
			msg, m.pending = *m.pending, nil
		} else {
			var err error
			if msg, err = m.reader.FetchMessage(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if e := m.lastErr.Load(); e != nil {
					return fmt.Errorf("subscription %d: %w (last client error: %s)", sub.id, err, *e)
				}
				return fmt.Errorf("subscription %d: %w", sub.id, err)
			}
		}
		slot, ok := c.slots[topicPartition{msg.Topic, msg.Partition}]
		if !ok {
			return fmt.Errorf("subscription %d got a record of %s/%d, a partition the run did not have when it started", sub.id, msg.Topic, msg.Partition)
		}
		switch sub.admit(slot, msg.Offset, budget) {
		case again:
			stats.redelivered.Add(1)
			continue
		case spent:
			m.pending = &msg
			done()
			return nil
		}
		sub.got.Add(1)
		m.count(&msg, stats)
		if err := m.commitOf(readCtx, msg); err != nil {
			return fmt.Errorf("subscription %d: %w", sub.id, err)
		}
	}
	done()
	return nil
}

// commitOf queues msg's commit when auto-commit is on. Reader.ReadMessage
// would fetch and commit in one call, under one context, and drop the
// record it fetched when that context ends before the commit is queued:
// a subscription's context ends as soon as it has its records, while its
// other members may be between the two, so each record it lost would be
// missing from the next phase. The commit is queued under the read's
// context instead, and a record fetched is always counted.
func (m *subMember) commitOf(ctx context.Context, msg kafka.Message) error {
	if !m.commit {
		return nil
	}
	if err := m.reader.CommitMessages(ctx, msg); err != nil && ctx.Err() == nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// countError checks that every subscription counted want records (read
// counts no record twice: see admit). The budgets make this hold whenever
// the total is right; it is checked apart so that a fault of theirs
// cannot pass as one subscription's records counted for another.
func (c *subsConsumer) countError(want int64) error {
	var bad []string
	for _, sub := range c.subs {
		if got := sub.got.Load(); got != want {
			bad = append(bad, fmt.Sprintf("subscription %d received %d", sub.id, got))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("count check failed: each of the %d subscriptions must receive %d records, but %s", len(c.subs), want, strings.Join(bad, ", "))
	}
	return nil
}

func (c *subsConsumer) rebalance() time.Duration { return time.Duration(c.ready.Load()) }

func (c *subsConsumer) collect(stats *consumeStats) {
	for _, sub := range c.subs {
		for _, m := range sub.members {
			m.collect(stats)
		}
	}
}

// close leaves the groups, all members at once: one by one, each leave
// would rebalance the group for the members still in it.
func (c *subsConsumer) close() error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, sub := range c.subs {
		for _, m := range sub.members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := m.close(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}
