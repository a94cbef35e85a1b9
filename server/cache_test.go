package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRU[int, string](2)
	c.Add(1, "a")
	c.Add(2, "b")
	c.Get(1) // 2 is now the least recently used
	c.Add(3, "c")
	if _, ok := c.Get(2); ok {
		t.Error("2 survived; it was the least recently used")
	}
	for _, k := range []int{1, 3} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%d was evicted", k)
		}
	}
	if c.Len() != 2 {
		t.Errorf("len = %d, want 2", c.Len())
	}
}

// TestLRUConcurrent hammers one small cache from many goroutines (run it
// with -race): it never holds more than its bound, and what it returns is
// what was stored under the key.
func TestLRUConcurrent(t *testing.T) {
	c := newLRU[int, int](8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := (g*31 + i) % 20
				if v, ok := c.Get(k); ok && v != k*k {
					t.Errorf("key %d holds %d", k, v)
					return
				}
				c.Add(k, k*k)
				if n := c.Len(); n > 8 {
					t.Errorf("len %d beyond the bound 8", n)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// bigFolded is a folded-stacks profile with n distinct stacks: enough for
// parsing it to take a while.
func bigFolded(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "main.main;main.work%d;main.leaf%d %d\n", i%97, i, 1+i%5)
	}
	return b.String()
}

// TestLoadProfileParsedOnce: concurrent first requests for one stored
// profile parse it once and share the result (singleflight), and later
// requests get the cached one.
func TestLoadProfileParsedOnce(t *testing.T) {
	ts := newTestServer(t, nil)
	id := ts.importRun(t, "big", bigFolded(20000))
	ctx := context.Background()
	const n = 16
	got := make([]*loadedProfile, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			lp, err := ts.loadProfile(ctx, id)
			if err != nil {
				t.Error(err)
			}
			got[i] = lp
		}()
	}
	close(start)
	wg.Wait()
	for i, lp := range got {
		if lp == nil || lp != got[0] {
			t.Fatalf("request %d got its own parse of profile %d (%p, first %p): concurrent requests must share one", i, id, lp, got[0])
		}
	}
	if again, err := ts.loadProfile(ctx, id); err != nil || again != got[0] {
		t.Errorf("a later request parsed again (%p, %v)", again, err)
	}
	if _, err := ts.loadProfile(ctx, id+1000); err == nil {
		t.Error("an unknown profile loaded")
	}
}

func TestCachedPagesFollowWritesAndCarryEachVisitorsToken(t *testing.T) {
	ts := newRunningTestServer(t, nil)
	first := ts.do(t, "GET", "/", "")
	if strings.Contains(first.Body.String(), "cache-me") {
		t.Fatal("label present before the run exists")
	}
	id := ts.createRun(t, `{"workload":"producer","label":"cache-me","params":{"num-records":100,"profile":"none"}}`)
	if !strings.Contains(ts.do(t, "GET", "/", "").Body.String(), "cache-me") {
		t.Error("the runs page did not change after a run was created")
	}
	ts.waitFinal(t, id)
	page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "", "Cookie", csrfCookie+"="+strings.Repeat("a", 32))
	if !strings.Contains(page.Body.String(), "succeeded") {
		t.Error("the run page still shows the run before it finished")
	}
	other := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "", "Cookie", csrfCookie+"="+strings.Repeat("b", 32))
	for name, body := range map[string]string{"first": page.Body.String(), "second": other.Body.String()} {
		if strings.Contains(body, string(ts.csrfPlaceholder)) {
			t.Errorf("%s visitor sees the placeholder token", name)
		}
	}
	if !strings.Contains(page.Body.String(), strings.Repeat("a", 32)) || !strings.Contains(other.Body.String(), strings.Repeat("b", 32)) {
		t.Error("a cached page does not carry its visitor's own CSRF token")
	}
}
