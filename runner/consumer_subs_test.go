package runner

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestSubscriptionAdmit: a record below what the subscription counted is
// a re-delivery and costs no budget; a new record claims budget until it
// is spent.
func TestSubscriptionAdmit(t *testing.T) {
	sub := &subscription{next: []int64{0, 10}}
	budget := &atomic.Int64{}
	budget.Store(3)
	steps := []struct {
		slot   int
		offset int64
		want   admission
		left   int64
	}{
		{0, 0, admitted, 2},
		{0, 1, admitted, 1},
		{0, 0, again, 1}, // the partition moved before offset 0's commit arrived
		{1, 9, again, 1}, // below where slot 1 starts: counted in an earlier phase
		{0, 2, admitted, 0},
		{0, 3, spent, 0}, // new, but nothing left to count it against
		{0, 1, again, 0}, // a re-delivery stays one with the budget spent
	}
	for i, s := range steps {
		if got := sub.admit(s.slot, s.offset, budget); got != s.want || budget.Load() != s.left {
			t.Fatalf("step %d: admit(%d, %d) = %d with %d left, want %d with %d left", i, s.slot, s.offset, got, budget.Load(), s.want, s.left)
		}
	}
	if sub.next[0] != 3 || sub.next[1] != 10 {
		t.Errorf("next = %v, want [3 10]", sub.next)
	}
}

// TestSubscriptionAdmitConcurrent: two members handed the same records at
// once, as after a rebalance, count each of them once.
func TestSubscriptionAdmitConcurrent(t *testing.T) {
	const records = 10000
	sub := &subscription{next: []int64{0}}
	budget := &atomic.Int64{}
	budget.Store(records)
	var counted, repeated atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := range int64(records) {
				switch sub.admit(0, off, budget) {
				case admitted:
					counted.Add(1)
				case again:
					repeated.Add(1)
				case spent:
					t.Errorf("offset %d: budget spent", off)
					return
				}
			}
		}()
	}
	wg.Wait()
	if counted.Load() != records || repeated.Load() != records || budget.Load() != 0 {
		t.Errorf("counted %d, again %d, %d left; want %d, %d, 0", counted.Load(), repeated.Load(), budget.Load(), records, records)
	}
}
