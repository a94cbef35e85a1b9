package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// admin asks the broker, with franz-go's kgo (not kafka-go, the client
// kbench measures), for what it holds: the high watermarks and committed
// offsets that the checks compare kbench's counts with.
type admin struct {
	cl *kgo.Client
}

func newAdmin(addr string) (*admin, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestTimeoutOverhead(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("kgo client: %w", err)
	}
	return &admin{cl: cl}, nil
}

func (a *admin) close() { a.cl.Close() }

// createTopic creates topic with partitions (replication: the broker's
// default); an existing topic is an error, so every check starts empty.
func (a *admin) createTopic(ctx context.Context, topic string, partitions int) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, int32(partitions), -1
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
	}
	return nil
}

// deleteTopic drops topic (the embedded broker keeps every record in RAM).
func (a *admin) deleteTopic(ctx context.Context, topic string) error {
	req := kmsg.NewPtrDeleteTopicsRequest()
	t := kmsg.NewDeleteTopicsRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	req.TopicNames = []string{topic}
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("delete topic %s: %w", topic, err)
		}
	}
	return nil
}

// partitions lists the partitions of topic.
func (a *admin) partitions(ctx context.Context, topic string) ([]int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, fmt.Errorf("metadata %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("metadata %s: %w", topic, err)
		}
		var ps []int32
		for _, p := range t.Partitions {
			ps = append(ps, p.Partition)
		}
		return ps, nil
	}
	return nil, fmt.Errorf("metadata %s: topic not in the answer", topic)
}

// highWatermarks returns each partition's high watermark (ListOffsets,
// timestamp -1: the offset the next record will get) and their sum.
func (a *admin) highWatermarks(ctx context.Context, topic string, parts []int32) (map[int32]int64, int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, p := range parts {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	out := map[int32]int64{}
	var total int64
	for _, sh := range a.cl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			return nil, 0, fmt.Errorf("list offsets %s: %w", topic, sh.Err)
		}
		resp := sh.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, 0, fmt.Errorf("list offsets %s/%d: %w", topic, p.Partition, err)
				}
				out[p.Partition] = p.Offset
				total += p.Offset
			}
		}
	}
	if len(out) != len(parts) {
		return nil, 0, fmt.Errorf("list offsets %s: %d of %d partitions answered", topic, len(out), len(parts))
	}
	return out, total, nil
}

// committed returns the sum of group's committed offsets on topic and how
// many partitions have one (OffsetFetch, answered by the group's
// coordinator).
func (a *admin) committed(ctx context.Context, group, topic string, parts []int32) (sum int64, n int, err error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic = topic
	rt.Partitions = parts
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return 0, 0, fmt.Errorf("offset fetch %s: %w", group, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, 0, fmt.Errorf("offset fetch %s: %w", group, err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return 0, 0, fmt.Errorf("offset fetch %s %s/%d: %w", group, topic, p.Partition, err)
			}
			if p.Offset >= 0 {
				sum += p.Offset
				n++
			}
		}
	}
	return sum, n, nil
}

// poller reads a topic's watermarks every interval on its own goroutine
// and clock until stopped.
type poller struct {
	mu    sync.Mutex
	polls []hwmPoll
	errs  int
	last  error
	quit  chan struct{}
	done  chan struct{}
}

func startPoller(ctx context.Context, a *admin, topic string, parts []int32, interval time.Duration) *poller {
	p := &poller{quit: make(chan struct{}), done: make(chan struct{})}
	read := func() {
		t0 := time.Now()
		_, total, err := a.highWatermarks(ctx, topic, parts)
		t1 := time.Now()
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.errs++
			p.last = err
			return
		}
		p.polls = append(p.polls, hwmPoll{T: t0.Add(t1.Sub(t0) / 2), HWM: total})
	}
	read()
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return p
}

// stop ends polling after one last reading and returns the readings.
func (p *poller) stop() ([]hwmPoll, int, error) {
	close(p.quit)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls, p.errs, p.last
}
