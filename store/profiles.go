package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/kbench/kbench/rundoc"
)

// profileListColumns are the profiles columns lists load: all but Data.
var profileListColumns = []string{
	"id", "run_id", "role", "kind", "bytes", "samples", "sha256", "uploaded", "created_at",
}

// GetProfile returns a profile with its data.
func (s *Store) GetProfile(ctx context.Context, id uint) (*Profile, error) {
	var p Profile
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&p).Error; err != nil {
		return nil, fmt.Errorf("store: profile %d: %w", id, notFound(err))
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
	err := db.Select(profileListColumns).Where("run_id = ?", runID).Order("id").Find(&ps).Error
	return ps, err
}

// AddProfiles attaches profiles to an existing run, all or none, and
// returns them with their IDs, sizes and checksums but without data.
func (s *Store) AddProfiles(ctx context.Context, runID uint, ps []Profile) ([]rundoc.Profile, error) {
	defer s.wrote()
	if err := checkProfiles(ps); err != nil {
		return nil, fmt.Errorf("store: run %d: add profiles: %w", runID, err)
	}
	var out []Profile
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&Run{}).Where("id = ?", runID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
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
