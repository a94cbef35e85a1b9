package rundoc

import (
	"fmt"
	"slices"
	"strings"
)

// Workload is what a run does. Its JSON is its name.
type Workload string

// Workloads. Imported is the workload of an import that holds profiles
// alone: an import of a Kafka tool's output takes the tool's workload
// (producer or consumer), and its Source says it was imported.
const (
	Producer  Workload = "producer"
	Consumer  Workload = "consumer"
	Writepath Workload = "writepath"
	// E2E is `kbench run e2e`: end-to-end latency, from a producer's send
	// to a consumer's receipt (see e2e.go).
	E2E      Workload = "e2e"
	Imported Workload = "imported"
)

// Workloads lists the workloads `kbench run` runs, in the order --help
// and the form list them.
func Workloads() []Workload { return []Workload{Producer, Consumer, Writepath, E2E} }

// AllWorkloads lists every workload a stored run may have.
func AllWorkloads() []Workload { return []Workload{Producer, Consumer, Writepath, E2E, Imported} }

// Valid reports whether w is one of AllWorkloads.
func (w Workload) Valid() bool { return slices.Contains(AllWorkloads(), w) }

// Runnable reports whether `kbench run` runs w (one of Workloads).
func (w Workload) Runnable() bool { return slices.Contains(Workloads(), w) }

// ParseWorkload reads a workload's name.
func ParseWorkload(s string) (Workload, error) {
	w := Workload(s)
	if !w.Valid() {
		return "", fmt.Errorf("unknown workload %q (want %s)", s, orList(names(AllWorkloads())))
	}
	return w, nil
}

// Status is where a run is in its life. A run moves queued → running →
// one of the final statuses; a queued run may also be canceled directly.
type Status string

// Statuses.
const (
	StatusQueued      Status = "queued"
	StatusRunning     Status = "running"
	StatusSucceeded   Status = "succeeded"
	StatusFailed      Status = "failed"
	StatusCanceled    Status = "canceled"
	StatusInterrupted Status = "interrupted"
)

// Statuses lists every status in the order of a run's life.
func Statuses() []Status {
	return []Status{StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusCanceled, StatusInterrupted}
}

// FinalStatuses lists the statuses a run never leaves.
func FinalStatuses() []Status {
	return []Status{StatusSucceeded, StatusFailed, StatusCanceled, StatusInterrupted}
}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool { return slices.Contains(Statuses(), s) }

// Final reports whether s is a status a run never leaves.
func (s Status) Final() bool { return slices.Contains(FinalStatuses(), s) }

// ParseStatus reads a status's name.
func ParseStatus(s string) (Status, error) {
	st := Status(s)
	if !st.Valid() {
		return "", fmt.Errorf("unknown status %q (want %s)", s, orList(names(Statuses())))
	}
	return st, nil
}

// Source says where a stored run's figures come from.
type Source string

// Sources.
const (
	// SourceLaunched: kbench ran it and measured it.
	SourceLaunched Source = "launched"
	// SourceImported: a user imported Kafka tool output or profiles; kbench
	// measured nothing of it.
	SourceImported Source = "imported"
)

// Valid reports whether s is one of the sources.
func (s Source) Valid() bool { return s == SourceLaunched || s == SourceImported }

// ParseSource reads a source's name.
func ParseSource(s string) (Source, error) {
	src := Source(s)
	if !src.Valid() {
		return "", fmt.Errorf("unknown source %q (want %s or %s)", s, SourceLaunched, SourceImported)
	}
	return src, nil
}

// ProfileRole is the side of the wire a profile was taken on.
type ProfileRole string

// Profile roles.
const (
	RoleClient ProfileRole = "client"
	RoleBroker ProfileRole = "broker"
)

// ProfileRoles lists the roles in the order pages list them.
func ProfileRoles() []ProfileRole { return []ProfileRole{RoleClient, RoleBroker} }

// Valid reports whether r is one of ProfileRoles.
func (r ProfileRole) Valid() bool { return slices.Contains(ProfileRoles(), r) }

// ParseProfileRole reads a role's name.
func ParseProfileRole(s string) (ProfileRole, error) {
	r := ProfileRole(s)
	if !r.Valid() {
		return "", fmt.Errorf("unknown profile role %q (want %s)", s, orList(names(ProfileRoles())))
	}
	return r, nil
}

// ProfileKind is what a profile measures: one of the Go runtime's
// profiles, or KindOther for a profile of another tool.
type ProfileKind string

// Profile kinds.
const (
	KindCPU       ProfileKind = "cpu"
	KindHeap      ProfileKind = "heap"
	KindAllocs    ProfileKind = "allocs"
	KindMutex     ProfileKind = "mutex"
	KindBlock     ProfileKind = "block"
	KindGoroutine ProfileKind = "goroutine"
	// KindOther is an uploaded profile of none of the other kinds (a
	// profile of another tool whose sample types kbench cannot name).
	KindOther ProfileKind = "other"
	// KindWall is a JVM profile of thread samples by state (Java Flight
	// Recorder's execution samples, threads running Java code, merged with
	// its native method samples, threads inside a native method, blocked
	// or not). It is not CPU time, so it is a kind of its own: a run can
	// hold it (kbench converts the JVM's recording), but --profile cannot
	// capture it from a Go client.
	KindWall ProfileKind = "wall"
)

// ProfileKinds lists the kinds a run captures (--profile), the Go
// runtime's profiles.
func ProfileKinds() []ProfileKind {
	return []ProfileKind{KindCPU, KindHeap, KindAllocs, KindMutex, KindBlock, KindGoroutine}
}

// Valid reports whether k is one of ProfileKinds, KindWall or KindOther:
// a kind a run can hold.
func (k ProfileKind) Valid() bool { return k == KindOther || k == KindWall || k.Captured() }

// Captured reports whether a run can capture k (one of ProfileKinds).
func (k ProfileKind) Captured() bool { return slices.Contains(ProfileKinds(), k) }

// ParseProfileKind reads a kind's name.
func ParseProfileKind(s string) (ProfileKind, error) {
	k := ProfileKind(s)
	if !k.Valid() {
		return "", fmt.Errorf("unknown profile kind %q (want %s)", s, orList(names(append(ProfileKinds(), KindWall, KindOther))))
	}
	return k, nil
}

// Better says which direction of a metric is an improvement.
type Better string

// Directions. Neither is a figure that is no better higher or lower
// (a count of records asked for, a batch size).
const (
	HigherIsBetter Better = "higher"
	LowerIsBetter  Better = "lower"
	Neither        Better = ""
)

// Valid reports whether b is one of the directions.
func (b Better) Valid() bool { return b == HigherIsBetter || b == LowerIsBetter || b == Neither }

// ParseBetter reads a direction.
func ParseBetter(s string) (Better, error) {
	b := Better(s)
	if !b.Valid() {
		return "", fmt.Errorf("unknown direction %q (want %s, %s or empty)", s, HigherIsBetter, LowerIsBetter)
	}
	return b, nil
}

// names is a list of string-typed values as strings.
func names[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// orList joins "a", "b", "c" as "a, b or c".
func orList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
