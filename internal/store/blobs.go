package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// Profiles keep their bytes in profile_blobs, once per distinct content
// (ProfileBlob). A blob is written with the first profile that names it
// and removed with the last one, in the transaction that removes that
// profile. On SQLite every writing transaction holds the database's write
// lock, so that is all there is to it. On PostgreSQL writers run at once,
// and the danger is a transaction storing a profile that names a blob
// while another deletes the last profile that named it before: the
// deleter, not seeing the new profile (uncommitted), would remove the
// blob. So both sides lock the blob's row before deciding:
//
//   - a writer takes it FOR KEY SHARE (inserting it first when missing)
//     before inserting the profile, and keeps the lock until it commits;
//   - a deleter, after deleting the profiles, takes the blobs they named
//     FOR UPDATE, which waits for every writer holding one, then deletes
//     those that no profile names, in a new statement, which sees what
//     those writers committed.
//
// A writer arriving after the deleter's lock waits for it; if the
// deleter removed the blob, the writer finds no row and inserts it again.
// Both lock blobs in the order of their keys, and lock a run before its
// blobs, so two of them never wait for each other in a cycle. The foreign
// key from profiles to profile_blobs makes the database refuse anything
// this protocol got wrong rather than lose a profile's bytes.

// blobKey is the key of data's blob: its SHA-256 in hex.
func blobKey(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// putBlobAttempts bounds the retries of putBlob: each retry means that a
// deleter removed the blob between two statements, which a second
// attempt, inserting it again, cannot meet again unless another profile
// of the same bytes was stored and deleted meanwhile.
const putBlobAttempts = 10

// putBlob makes sure tx has the blob of data under key and, on
// PostgreSQL, holds it until tx ends. The bytes are only sent when the
// blob is missing: a profile stored again costs its checksum, not its
// size.
func putBlob(tx *gorm.DB, key string, data []byte) error {
	if data == nil {
		data = []byte{} // an empty profile's data is no bytes, not NULL
	}
	for range putBlobAttempts {
		var found []string
		if err := lockFor(tx, "KEY SHARE").Model(&ProfileBlob{}).Where("sha256 = ?", key).Pluck("sha256", &found).Error; err != nil {
			return fmt.Errorf("blob %s: %w", key, err)
		}
		if len(found) > 0 {
			return nil
		}
		// A concurrent insert of the same bytes makes this wait for
		// that transaction, then do nothing if it committed; the lock
		// is taken by the next round either way.
		if err := tx.Exec("INSERT INTO profile_blobs (sha256, bytes, data) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
			key, len(data), data).Error; err != nil {
			return fmt.Errorf("blob %s: %w", key, err)
		}
	}
	return fmt.Errorf("blob %s: removed by others %d times while being stored", key, putBlobAttempts)
}

// profileBlobs checks profiles' given sizes and checksums against their
// data and returns their keys, in the profiles' order.
func profileBlobs(profiles []Profile) ([]string, error) {
	keys := make([]string, len(profiles))
	for i, p := range profiles {
		keys[i] = blobKey(p.Data)
		if p.SHA256 != "" && p.SHA256 != keys[i] {
			return nil, fmt.Errorf("profile %s/%s: sha256 %s given, but its data's is %s", p.Role, p.Kind, p.SHA256, keys[i])
		}
		if p.Bytes != 0 && p.Bytes != int64(len(p.Data)) {
			return nil, fmt.Errorf("profile %s/%s: %d bytes given, but its data has %d", p.Role, p.Kind, p.Bytes, len(p.Data))
		}
	}
	return keys, nil
}

// putBlobs stores the blobs of profiles whose keys are keys, each once,
// in the order of their keys (see the protocol above).
func putBlobs(tx *gorm.DB, profiles []Profile, keys []string) error {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	for n, i := range order {
		if n > 0 && keys[order[n-1]] == keys[i] {
			continue
		}
		if err := putBlob(tx, keys[i], profiles[i].Data); err != nil {
			return fmt.Errorf("profile %s/%s: %w", profiles[i].Role, profiles[i].Kind, err)
		}
	}
	return nil
}

// putRunsBlobs stores the blobs of the profiles of runs, as putBlobs.
func putRunsBlobs(tx *gorm.DB, runs []*Run) error {
	var all []Profile
	for _, r := range runs {
		all = append(all, r.Profiles...)
	}
	if len(all) == 0 {
		return nil
	}
	keys, err := profileBlobs(all)
	if err != nil {
		return err
	}
	return putBlobs(tx, all, keys)
}

// blobsOfRuns returns the keys of the blobs the profiles of runs name,
// sorted, each once: what dropUnusedBlobs is to check once they are gone.
func blobsOfRuns(tx *gorm.DB, runs []uint) ([]string, error) {
	var keys []string
	if len(runs) == 0 {
		return nil, nil
	}
	err := tx.Model(&Profile{}).Where("run_id IN ?", runs).Distinct("sha256").Order("sha256").Pluck("sha256", &keys).Error
	if err != nil {
		return nil, fmt.Errorf("blobs of runs: %w", err)
	}
	return keys, nil
}

// dropUnusedBlobs removes those of the blobs keys (sorted) that no
// profile names any more, once tx has deleted profiles that named them.
func dropUnusedBlobs(tx *gorm.DB, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if isPostgres(tx) {
		// Wait for the writers holding these blobs (see above); the
		// DELETE below is a new statement, so it sees what they stored.
		var locked []string
		if err := lockFor(tx, "UPDATE").Model(&ProfileBlob{}).Where("sha256 IN ?", keys).Order("sha256").
			Pluck("sha256", &locked).Error; err != nil {
			return fmt.Errorf("lock blobs: %w", err)
		}
	}
	err := tx.Exec(`DELETE FROM profile_blobs WHERE sha256 IN ?
		AND NOT EXISTS (SELECT 1 FROM profiles WHERE profiles.sha256 = profile_blobs.sha256)`, keys).Error
	if err != nil {
		return fmt.Errorf("delete unused blobs: %w", err)
	}
	return nil
}
