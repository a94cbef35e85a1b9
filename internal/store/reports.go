package store

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/kbench/kbench/internal/rundoc"
)

// Report is a saved comparison at a permanent link /r/<slug>. It stores
// which runs to compare and how, not the figures: the table is computed
// again from the stored runs each time, so a report stays correct after
// more runs are added. A run a report uses cannot be deleted (DeleteRun
// refuses with ErrConflict): reports are never frozen copies.
type Report struct {
	ID uint `gorm:"primaryKey"`
	// Slug is the report's random name in its link: 16 random bytes
	// (128 bits) in lower-case base32 without padding, 26 characters.
	Slug  string `gorm:"uniqueIndex;size:32"`
	Title string `gorm:"size:200"`
	Notes string
	// RunIDs are the compared runs in column order; the first is the
	// baseline. Stored as a JSON list.
	RunIDs []uint `gorm:"serializer:json"`
	// By is how columns are formed: run, label, group or change.
	By string `gorm:"size:8"`
	// At is, for a before/after report of a change point (By "change"),
	// the first run after the change: the columns split there. 0 for other
	// reports. Added by migration 0004_report_split.
	At uint `gorm:"column:split_at;not null;default:0" json:",omitempty"`
	// SweepID is the latency-vs-throughput sweep the report shows, ""
	// for none. Its runs are held back like RunIDs (see reportsUsing),
	// through sweep_runs rather than report_runs, so that the reference
	// stays the only thing stored. Added by migration 0010_report_sweep.
	SweepID string `gorm:"size:32;not null;default:'';index:idx_reports_sweep"`
	// SLOID is the latency-target search the report shows, "" for none;
	// its runs are held back through slo_runs as a sweep's are. Added by
	// migration 0013_slos.
	SLOID     string `gorm:"column:slo_id;size:32;not null;default:'';index:idx_reports_slo"`
	CreatedAt time.Time
}

// ReportRun records that a report uses a run, so DeleteRun can find the
// reports that hold a run back with one indexed query.
type ReportRun struct {
	ID       uint `gorm:"primaryKey"`
	ReportID uint `gorm:"index"`
	RunID    uint `gorm:"index"`
}

// slugEncoding is lower-case base32 without padding: URL-safe and easy
// to read aloud.
var slugEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewSlug returns a random report slug of 128 bits.
func NewSlug() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return slugEncoding.EncodeToString(b)
}

// CreateReport stores a new report. It fills in ID, Slug (unless set)
// and CreatedAt. Every run must exist (ErrNotFound otherwise) and appear
// once; there must be at least one, or a sweep (doc.Sweep), which must
// exist (ErrNotFound otherwise).
func (s *Store) CreateReport(ctx context.Context, doc *rundoc.Report) error {
	defer s.wroteOutsideSeries()
	if doc == nil || doc.ID != 0 {
		return errors.New("store: create report: not a new report")
	}
	r := &Report{Slug: doc.Slug, Title: doc.Title, Notes: doc.Notes, RunIDs: doc.RunIDs, By: doc.By, At: doc.At, SweepID: doc.Sweep, SLOID: doc.SLO}
	if len(r.RunIDs) == 0 && r.SweepID == "" && r.SLOID == "" {
		return errors.New("store: create report: no runs, no sweep and no search")
	}
	if r.RunIDs == nil {
		r.RunIDs = []uint{} // stored as [], not null
	}
	if r.At != 0 && !slices.Contains(r.RunIDs, r.At) {
		return fmt.Errorf("store: create report: split at run %d, which the report does not hold", r.At)
	}
	seen := map[uint]bool{}
	for _, id := range r.RunIDs {
		if seen[id] {
			return fmt.Errorf("store: create report: run %d appears twice", id)
		}
		seen[id] = true
	}
	if r.Slug == "" {
		r.Slug = NewSlug()
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// FOR SHARE on PostgreSQL: a run of the report cannot be deleted
		// until the report is stored (DeleteRun locks it FOR UPDATE).
		var found []uint
		if len(r.RunIDs) > 0 {
			if err := lockFor(tx, "SHARE").Model(&Run{}).Where("id IN ?", r.RunIDs).Pluck("id", &found).Error; err != nil {
				return err
			}
		}
		if len(found) != len(r.RunIDs) {
			return fmt.Errorf("a run of the report: %w", ErrNotFound)
		}
		if r.SweepID != "" {
			// The sweep's runs FOR SHARE too, for the same reason.
			var n int64
			if err := tx.Model(&Sweep{}).Where("id = ?", r.SweepID).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("sweep %s: %w", r.SweepID, ErrNotFound)
			}
			var ids []uint
			if err := lockFor(tx, "SHARE").Model(&Run{}).
				Where("id IN (?)", tx.Model(&SweepRun{}).Select("run_id").Where("sweep_id = ?", r.SweepID)).
				Pluck("id", &ids).Error; err != nil {
				return err
			}
		}
		if r.SLOID != "" {
			var n int64
			if err := tx.Model(&SLO{}).Where("id = ?", r.SLOID).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("slo %s: %w", r.SLOID, ErrNotFound)
			}
			var ids []uint
			if err := lockFor(tx, "SHARE").Model(&Run{}).
				Where("id IN (?)", tx.Model(&SLORun{}).Select("run_id").Where("slo_id = ?", r.SLOID)).
				Pluck("id", &ids).Error; err != nil {
				return err
			}
		}
		if err := tx.Create(r).Error; err != nil {
			return err
		}
		if len(r.RunIDs) == 0 {
			return nil
		}
		links := make([]ReportRun, len(r.RunIDs))
		for i, id := range r.RunIDs {
			links[i] = ReportRun{ReportID: r.ID, RunID: id}
		}
		return tx.Create(&links).Error
	})
	if err != nil {
		return fmt.Errorf("store: create report: %w", err)
	}
	*doc = reportDoc(r)
	return nil
}

// GetReport returns the report with the given slug, or ErrNotFound.
func (s *Store) GetReport(ctx context.Context, slug string) (*rundoc.Report, error) {
	var r Report
	if err := s.db.WithContext(ctx).Where("slug = ?", slug).Take(&r).Error; err != nil {
		return nil, fmt.Errorf("store: report: %w", notFound(err))
	}
	d := reportDoc(&r)
	return &d, nil
}

// ReportsUsingRun returns the reports that use a run (ID, Slug and Title
// only), oldest first: while there are any, the run cannot be deleted.
func (s *Store) ReportsUsingRun(ctx context.Context, runID uint) ([]rundoc.Report, error) {
	reports := []Report{}
	if err := reportsUsing(s.db.WithContext(ctx), runID, 0).Find(&reports).Error; err != nil {
		return nil, fmt.Errorf("store: reports using run %d: %w", runID, err)
	}
	out := make([]rundoc.Report, len(reports))
	for i := range reports {
		out[i] = reportDoc(&reports[i])
	}
	return out, nil
}

// reportsUsing selects the reports that use a run, at most limit of them
// (0: all): those that compare it (report_runs) and those that show a
// sweep (sweep_runs) or a latency-target search (slo_runs) it belongs to.
func reportsUsing(db *gorm.DB, runID uint, limit int) *gorm.DB {
	q := db.Model(&Report{}).Select("reports.id", "reports.slug", "reports.title").
		Where("reports.id IN (?) OR reports.sweep_id IN (?) OR reports.slo_id IN (?)",
			db.Model(&ReportRun{}).Select("report_id").Where("run_id = ?", runID),
			db.Model(&SweepRun{}).Select("sweep_id").Where("run_id = ?", runID),
			db.Model(&SLORun{}).Select("slo_id").Where("run_id = ?", runID)).
		Order("reports.id")
	if limit > 0 {
		q = q.Limit(limit)
	}
	return q
}

// notReported keeps, of a query on runs, those no report holds back:
// none compares them and none shows a sweep or a search they belong to.
func notReported(tx, q *gorm.DB) *gorm.DB {
	return q.Where("id NOT IN (?)", tx.Model(&ReportRun{}).Select("run_id")).
		Where("id NOT IN (?)", tx.Model(&SweepRun{}).Select("run_id").
			Where("sweep_id IN (?)", tx.Model(&Report{}).Select("sweep_id").Where("sweep_id <> ''"))).
		Where("id NOT IN (?)", tx.Model(&SLORun{}).Select("run_id").
			Where("slo_id IN (?)", tx.Model(&Report{}).Select("slo_id").Where("slo_id <> ''")))
}
