package store

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/kbench/kbench/internal/rundoc"
)

// profileListColumns are the columns lists load: all but Data, with the
// size from the profile's blob.
var profileListColumns = []string{
	"profiles.id", "profiles.run_id", "profiles.role", "profiles.kind", "profile_blobs.bytes",
	"profiles.samples", "profiles.sha256", "profiles.uploaded", "profiles.created_at",
}

// withBlobs reads profiles with their blobs.
func withBlobs(db *gorm.DB) *gorm.DB {
	return db.Model(&Profile{}).Joins("JOIN profile_blobs ON profile_blobs.sha256 = profiles.sha256")
}

// ErrCorrupt is what a *CorruptError is (errors.Is): stored bytes that no
// longer hash to the checksum they were stored under.
var ErrCorrupt = errors.New("stored bytes do not match their sha256")

// CorruptError is a stored profile whose bytes do not hash to its sha256:
// the database file or a disk under it was damaged or edited. Its bytes
// are never handed out: what they hold is unknown.
type CorruptError struct {
	ID uint
	// Want is the sha256 the profile was stored under, Got its bytes'.
	Want, Got string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("profile %d's stored bytes do not match their sha256 (stored as %s, the bytes hash to %s)", e.ID, e.Want, e.Got)
}

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// GetProfile returns a profile with its data, checked against the sha256
// it was stored under: bytes that do not match are a *CorruptError, and
// no profile. Every reader of a profile's bytes (download, flame graphs,
// the pprof UI, diffs) goes through here; hashing costs about 2 ms per
// MB, and the server parses a profile once (its parse cache).
func (s *Store) GetProfile(ctx context.Context, id uint) (*Profile, error) {
	var p Profile
	err := withBlobs(s.db.WithContext(ctx)).Select(append(profileListColumns, "profile_blobs.data")).
		Where("profiles.id = ?", id).Take(&p).Error
	if err != nil {
		return nil, fmt.Errorf("store: profile %d: %w", id, notFound(err))
	}
	if got := blobKey(p.Data); got != p.SHA256 {
		return nil, &CorruptError{ID: id, Want: p.SHA256, Got: got}
	}
	return &p, nil
}

// ListProfiles returns a run's profiles without their data, in the order
// they were stored. A run without profiles gives an empty list; a missing
// run gives ErrNotFound.
func (s *Store) ListProfiles(ctx context.Context, runID uint) ([]rundoc.Profile, error) {
	db := s.db.WithContext(ctx)
	var n int64
	if err := db.Model(&Run{}).Where("id = ?", runID).Count(&n).Error; err != nil {
		return nil, fmt.Errorf("store: run %d: profiles: %w", runID, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("store: run %d: %w", runID, ErrNotFound)
	}
	ps, err := listProfiles(db, runID)
	if err != nil {
		return nil, fmt.Errorf("store: run %d: profiles: %w", runID, err)
	}
	return profileDocs(ps), nil
}

func listProfiles(db *gorm.DB, runID uint) ([]Profile, error) {
	ps := []Profile{}
	err := withBlobs(db).Select(profileListColumns).Where("profiles.run_id = ?", runID).Order("profiles.id").Find(&ps).Error
	return ps, err
}

// AddProfiles attaches profiles to an existing run, all or none, and
// returns them with their IDs, sizes and checksums but without data.
func (s *Store) AddProfiles(ctx context.Context, runID uint, ps []Profile) ([]rundoc.Profile, error) {
	defer s.wroteOutsideSeries() // series read runs and metrics alone
	if err := checkProfiles(ps); err != nil {
		return nil, fmt.Errorf("store: run %d: add profiles: %w", runID, err)
	}
	var out []Profile
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// On PostgreSQL, hold the run (FOR KEY SHARE, as the profiles'
		// foreign key would) before the blobs: a DeleteRun locks the run,
		// then the blobs, and the same order everywhere means no deadlock.
		// A run deleted meanwhile is then not found.
		var ids []uint
		if err := lockFor(tx, "KEY SHARE").Model(&Run{}).Where("id = ?", runID).Pluck("id", &ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return ErrNotFound
		}
		if err := insertResults(tx, runID, nil, nil, ps); err != nil {
			return err
		}
		all, err := listProfiles(tx, runID)
		if err != nil {
			return err
		}
		out = all[len(all)-len(ps):]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: run %d: add profiles: %w", runID, err)
	}
	return profileDocs(out), nil
}

// ProfiledRuns returns those of the runs ids that have a profile of kind
// and role, in the order of ids: one query, which the naming of a
// regression's functions asks for each segment's nearest runs.
func (s *Store) ProfiledRuns(ctx context.Context, ids []uint, kind, role string) ([]uint, error) {
	if len(ids) == 0 {
		return []uint{}, nil
	}
	var have []uint
	err := s.db.WithContext(ctx).Model(&Profile{}).Distinct("run_id").
		Where("run_id IN ? AND kind = ? AND role = ?", ids, kind, role).Pluck("run_id", &have).Error
	if err != nil {
		return nil, fmt.Errorf("store: profiles of runs %v: %w", ids, err)
	}
	set := make(map[uint]bool, len(have))
	for _, id := range have {
		set[id] = true
	}
	out := []uint{}
	for _, id := range ids {
		if set[id] {
			out = append(out, id)
		}
	}
	return out, nil
}
