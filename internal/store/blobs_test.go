package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-gormigrate/gormigrate/v2"

	"github.com/kbench/kbench/internal/rundoc"
)

// blobCount is how many profile blobs the database holds.
func blobCount(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.db.Model(&ProfileBlob{}).Count(&n).Error; err != nil {
		t.Fatalf("count blobs: %v", err)
	}
	return n
}

// randomBytes is n bytes no other test gives: every byte value, zeros
// included, so a round trip that loses or transcodes any shows.
func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestProfileBlobsShared: identical profiles, in two runs or twice in
// one, are stored once; deleting a run keeps the blob while another
// profile names it and removes it with the last; the bytes come back
// exactly as given.
func TestProfileBlobsShared(t *testing.T) { eachBackend(t, testProfileBlobsShared) }

func testProfileBlobsShared(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	shared, own := randomBytes(t, 300_000), append([]byte{0, 0, 0}, randomBytes(t, 1000)...)
	a := &Run{Label: "a", Status: rundoc.StatusSucceeded, Profiles: []Profile{
		{Role: "client", Kind: "cpu", Data: shared, Samples: 1},
		{Role: "broker", Kind: "cpu", Data: shared, Samples: 1}, // twice in one run
		{Role: "client", Kind: "heap", Data: own},
	}}
	b := &Run{Label: "b", Status: rundoc.StatusSucceeded}
	create(t, s, a, b)
	// The second run gets the same bytes by each way profiles arrive.
	if _, err := s.AddProfiles(ctx, b.ID, []Profile{{Role: "client", Kind: "cpu", Data: shared, Uploaded: true}}); err != nil {
		t.Fatal(err)
	}
	c := &Run{Label: "c"}
	create(t, s, c)
	if err := s.FinishRun(ctx, c.ID, Outcome{Status: rundoc.StatusSucceeded, Profiles: []Profile{{Role: "client", Kind: "cpu", Data: shared}}}); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, s); n != 2 {
		t.Errorf("%d blobs for 5 profiles of 2 distinct contents, want 2", n)
	}
	check := func(when string, runs ...*Run) {
		t.Helper()
		for _, r := range runs {
			ps, err := s.ListProfiles(ctx, r.ID)
			if err != nil {
				t.Fatalf("%s: run %s: %v", when, r.Label, err)
			}
			if len(ps) == 0 {
				t.Fatalf("%s: run %s has no profiles", when, r.Label)
			}
			for _, p := range ps {
				want := shared
				if p.Kind == "heap" {
					want = own
				}
				full, err := s.GetProfile(ctx, p.ID)
				if err != nil {
					t.Fatalf("%s: run %s: profile %d: %v", when, r.Label, p.ID, err)
				}
				if !bytes.Equal(full.Data, want) || full.Bytes != int64(len(want)) || p.Bytes != full.Bytes ||
					full.SHA256 != sum256(want) || p.SHA256 != full.SHA256 || full.Role != p.Role || full.RunID != r.ID {
					t.Errorf("%s: run %s: profile %d: %d bytes (listed %d), sha256 %s, want its %d bytes back exactly",
						when, r.Label, p.ID, len(full.Data), p.Bytes, full.SHA256, len(want))
				}
			}
		}
	}
	check("stored", a, b, c)

	if err := s.DeleteRun(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, s); n != 1 {
		t.Errorf("after deleting run a: %d blobs, want 1 (its own heap profile gone, the shared one kept)", n)
	}
	check("after deleting a", b, c)
	if err := s.DeleteRun(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	check("after deleting b", c)
	if _, err := s.PruneRuns(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, s); n != 0 {
		t.Errorf("after deleting every run: %d blobs, want 0", n)
	}

	// Stored again after its blob went: the blob comes back.
	d := &Run{Label: "d", Status: rundoc.StatusSucceeded, Profiles: []Profile{{Role: "client", Kind: "cpu", Data: shared}}}
	create(t, s, d)
	check("stored again", d)
}

// TestProfileBlobsRefuseWrongChecksum: a caller's checksum or size that
// is not its data's is refused, and nothing of the batch is stored: a
// wrong key would serve other bytes to every profile sharing it.
func TestProfileBlobsRefuseWrongChecksum(t *testing.T) {
	eachBackend(t, testProfileBlobsRefuseWrongChecksum)
}

func testProfileBlobsRefuseWrongChecksum(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	r := &Run{Label: "r", Status: rundoc.StatusSucceeded}
	create(t, s, r)
	data := []byte("profile")
	for _, p := range []Profile{
		{Role: "client", Kind: "cpu", Data: data, SHA256: sum256([]byte("other"))},
		{Role: "client", Kind: "cpu", Data: data, Bytes: 99},
	} {
		_, err := s.AddProfiles(ctx, r.ID, []Profile{{Role: "client", Kind: "heap", Data: []byte("fine")}, p})
		if err == nil || !strings.Contains(err.Error(), "given") {
			t.Errorf("AddProfiles(sha256 %q, %d bytes) = %v, want a refusal", p.SHA256, p.Bytes, err)
		}
	}
	if ps, _ := s.ListProfiles(ctx, r.ID); len(ps) != 0 {
		t.Errorf("%d profiles stored by refused batches", len(ps))
	}
	if n := blobCount(t, s); n != 0 {
		t.Errorf("%d blobs stored by refused batches", n)
	}
	// The right ones are taken.
	if _, err := s.AddProfiles(ctx, r.ID, []Profile{{Role: "client", Kind: "cpu", Data: data, SHA256: sum256(data), Bytes: int64(len(data))}}); err != nil {
		t.Errorf("AddProfiles with its data's checksum and size: %v", err)
	}
}

// TestProfileBlobsConcurrentDelete races the deletion of the last run
// naming a blob against storing a profile of the same bytes, many times
// over: the new profile must always keep its bytes, and no blob may
// outlive its last profile. On PostgreSQL the two transactions really
// overlap (on SQLite they take turns at the write lock).
func TestProfileBlobsConcurrentDelete(t *testing.T) { eachBackend(t, testProfileBlobsConcurrentDelete) }

func testProfileBlobsConcurrentDelete(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const rounds = 40
	for i := range rounds {
		data := randomBytes(t, 2000)
		old := &Run{Label: "old", Status: rundoc.StatusSucceeded, Profiles: []Profile{{Role: "client", Kind: "cpu", Data: data}}}
		target := &Run{Label: "new", Status: rundoc.StatusSucceeded}
		create(t, s, old, target)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		start := make(chan struct{})
		wg.Add(3)
		go func() {
			defer wg.Done()
			<-start
			errs[0] = s.DeleteRun(ctx, old.ID)
		}()
		go func() {
			defer wg.Done()
			<-start
			_, errs[1] = s.AddProfiles(ctx, target.ID, []Profile{{Role: "client", Kind: "cpu", Data: data}})
		}()
		created := &Run{Label: "created", Status: rundoc.StatusSucceeded, Profiles: []Profile{{Role: "broker", Kind: "cpu", Data: data}}}
		go func() {
			defer wg.Done()
			<-start
			errs[2] = s.CreateRuns(ctx, []*Run{created})
		}()
		close(start)
		wg.Wait()
		for j, err := range errs {
			if err != nil {
				t.Fatalf("round %d: operation %d: %v", i, j, err)
			}
		}
		for _, r := range []*Run{target, created} {
			ps, err := s.ListProfiles(ctx, r.ID)
			if err != nil || len(ps) != 1 {
				t.Fatalf("round %d: run %s: profiles %v, %v", i, r.Label, ps, err)
			}
			if got := profileData(t, s, ps[0].ID); !bytes.Equal(got, data) {
				t.Fatalf("round %d: run %s: %d bytes back, want its %d", i, r.Label, len(got), len(data))
			}
		}
		// Two batches of runs storing the same two new contents, in
		// opposite orders, at once: both are stored (neither waits for
		// the other in a cycle).
		x, y := randomBytes(t, 500), randomBytes(t, 500)
		batch := func(first, second []byte) []*Run {
			return []*Run{
				{Label: "batch", Status: rundoc.StatusSucceeded, Profiles: []Profile{{Role: "client", Kind: "cpu", Data: first}}},
				{Label: "batch", Status: rundoc.StatusSucceeded, Profiles: []Profile{{Role: "client", Kind: "cpu", Data: second}}},
			}
		}
		batches := [][]*Run{batch(x, y), batch(y, x)}
		var berrs [2]error
		wg.Add(2)
		for j, runs := range batches {
			go func() {
				defer wg.Done()
				berrs[j] = s.CreateRuns(ctx, runs)
			}()
		}
		wg.Wait()
		if berrs[0] != nil || berrs[1] != nil {
			t.Fatalf("round %d: batches of the same contents: %v, %v", i, berrs[0], berrs[1])
		}
		for _, runs := range batches {
			for _, r := range runs {
				if err := s.DeleteRun(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
			}
		}

		// Now the other way: the last two profiles go at once.
		var derrs [2]error
		wg.Add(2)
		for j, r := range []*Run{target, created} {
			go func() {
				defer wg.Done()
				derrs[j] = s.DeleteRun(ctx, r.ID)
			}()
		}
		wg.Wait()
		if derrs[0] != nil || derrs[1] != nil {
			t.Fatalf("round %d: deletes: %v, %v", i, derrs[0], derrs[1])
		}
		if n := blobCount(t, s); n != 0 {
			t.Fatalf("round %d: %d blobs left after deleting every run", i, n)
		}
	}
}

// TestMigrationProfileBlobs builds a database of schema 0005 (every
// migration before 0006_profile_blobs) holding profiles the old way,
// data in each row, and opens it: each distinct content is moved to one
// blob, byte for byte, the profiles keep their ids, fields and order,
// a row's checksum is made its data's, and the old columns are gone.
func TestMigrationProfileBlobs(t *testing.T) { eachBackend(t, testMigrationProfileBlobs) }

func testMigrationProfileBlobs(t *testing.T) {
	dsn := storeDSN(t)
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{migrationsTable, "workers", "report_runs", "reports", "profiles", "profile_blobs", "series_points", "metrics", "runs"} {
		if err := s.db.Migrator().DropTable(table); err != nil {
			t.Fatal(err)
		}
	}
	at := slices.IndexFunc(migrations, func(m *gormigrate.Migration) bool { return m.ID == "0006_profile_blobs" })
	before := migrations[:at]
	if last := before[len(before)-1].ID; last != "0005_history_indexes" {
		t.Fatalf("the migration before 0006 is %s", last)
	}
	if err := gormigrate.New(s.db, migrationOptions(), before).Migrate(); err != nil {
		t.Fatal(err)
	}
	shared, other, empty := randomBytes(t, 100_000), []byte("\x00\x01other\xff"), []byte{}
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	type row struct {
		id      uint
		run     uint
		role    string
		data    []byte
		sha     string // as the old row had it
		samples int64
	}
	rows := []row{
		{1, 1, "client", shared, sum256(shared), 10},
		{2, 1, "broker", other, sum256(other), 11},
		{4, 2, "client", shared, sum256(shared), 12}, // the same bytes in another run; id 3 was deleted
		{5, 2, "broker", empty, sum256(empty), 0},
		{6, 3, "client", other, "given by a caller", 13}, // a checksum that is not its data's
	}
	for _, id := range []uint{1, 2, 3} {
		if err := s.db.Exec("INSERT INTO runs (id, label, status, source, created_at) VALUES (?, ?, 'succeeded', 'launched', ?)",
			id, fmt.Sprint("run ", id), created).Error; err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rows {
		if err := s.db.Exec(`INSERT INTO profiles (id, run_id, role, kind, bytes, samples, sha256, uploaded, data, created_at)
			VALUES (?, ?, ?, 'cpu', ?, ?, ?, ?, ?, ?)`, r.id, r.run, r.role, len(r.data), r.samples, r.sha, r.run == 3, r.data, created).Error; err != nil {
			t.Fatal(err)
		}
	}
	// A profile 7 was stored and deleted since: the id sequence is at 7.
	if s.pg {
		if err := s.db.Exec("SELECT setval(pg_get_serial_sequence('profiles', 'id'), 7), setval(pg_get_serial_sequence('runs', 'id'), 3)").Error; err != nil {
			t.Fatal(err)
		}
	} else if err := s.db.Exec("UPDATE sqlite_sequence SET seq = 7 WHERE name = 'profiles'").Error; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dsn)
	if err != nil {
		t.Fatalf("open a database of schema 0005: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	if n := blobCount(t, s); n != 3 {
		t.Errorf("%d blobs for 3 distinct contents, want 3", n)
	}
	for _, r := range rows {
		p, err := s.GetProfile(ctx, r.id)
		if err != nil {
			t.Fatalf("profile %d: %v", r.id, err)
		}
		if !bytes.Equal(p.Data, r.data) || p.Bytes != int64(len(r.data)) || p.SHA256 != sum256(r.data) ||
			p.RunID != r.run || string(p.Role) != r.role || p.Kind != "cpu" || p.Samples != r.samples ||
			p.Uploaded != (r.run == 3) || !p.CreatedAt.Equal(created) {
			t.Errorf("profile %d after the migration: %+v (%d bytes of data), want %+v", r.id, ProfileDoc(p), len(p.Data), r)
		}
	}
	if ps, err := s.ListProfiles(ctx, 2); err != nil || len(ps) != 2 || ps[0].ID != 4 || ps[1].ID != 5 || ps[1].Bytes != 0 {
		t.Errorf("ListProfiles(2) = %+v, %v; want profiles 4 and 5, in order", ps, err)
	}
	for _, col := range []string{"data", "bytes"} {
		if s.db.Migrator().HasColumn("profiles", col) {
			t.Errorf("profiles.%s is still there", col)
		}
	}
	// A new profile gets an id never used before, and deleting runs
	// still removes what they alone used.
	n := &Run{Label: "new", Status: rundoc.StatusSucceeded, Profiles: []Profile{{Role: "client", Kind: "cpu", Data: []byte("new")}}}
	create(t, s, n)
	if ps, _ := s.ListProfiles(ctx, n.ID); len(ps) != 1 || ps[0].ID <= 7 {
		t.Errorf("a profile stored after the migration: %+v, want an id above 7 (the sequence kept)", ps)
	}
	for _, id := range []uint{1, 3} {
		if err := s.DeleteRun(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if n := blobCount(t, s); n != 3 {
		t.Errorf("after deleting runs 1 and 3: %d blobs, want 3 (run 2's two and the new one)", n)
	}
}
