package rundoc

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// FieldErrors is every invalid field of one input, so that a user fixes
// them all in one go rather than one per attempt. It holds every error
// found, several for one field when it breaks several rules (the same
// message for the same field once), and unwraps to them:
// errors.As(err, &fe) with fe a *FieldError finds the first. Rules that
// follow from an earlier error (a value that did not parse is not judged
// again) are the validators' to skip, with Has.
type FieldErrors []*FieldError

func (e FieldErrors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fe.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the field errors, for errors.As and errors.Is.
func (e FieldErrors) Unwrap() []error {
	out := make([]error, len(e))
	for i, fe := range e {
		out[i] = fe
	}
	return out
}

// Add records an error for field, unless field already has this very
// message.
func (e *FieldErrors) Add(field, format string, args ...any) {
	e.add(&FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (e *FieldErrors) add(fe *FieldError) {
	for _, x := range *e {
		if x.Field == fe.Field && x.Msg == fe.Msg {
			return
		}
	}
	*e = append(*e, fe)
}

// Append records the field errors err holds (a *FieldError or a
// FieldErrors) and returns nil; any other non-nil error is returned
// unchanged, for the caller to give up with.
func (e *FieldErrors) Append(err error) error {
	var list FieldErrors
	var one *FieldError
	switch {
	case err == nil:
	case errors.As(err, &list):
		for _, fe := range list {
			e.add(fe)
		}
	case errors.As(err, &one):
		e.add(one)
	default:
		return err
	}
	return nil
}

// Has reports whether field has an error.
func (e FieldErrors) Has(field string) bool {
	for _, fe := range e {
		if fe.Field == field {
			return true
		}
	}
	return false
}

// Err returns e as an error: nil when it is empty.
func (e FieldErrors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

// SortByOptions orders the errors as the option table (and so --help and
// the web form) lists the fields; fields it does not know come first, by
// name: a misspelt flag is the first thing to fix.
func (e FieldErrors) SortByOptions() {
	rank := map[string]int{}
	for i, o := range options() {
		if _, ok := rank[o.name]; !ok {
			rank[o.name] = i + 1
		}
	}
	sort.SliceStable(e, func(i, j int) bool {
		ri, rj := rank[e[i].Field], rank[e[j].Field]
		if ri != rj {
			return ri < rj
		}
		return ri == 0 && e[i].Field < e[j].Field
	})
}

// SortBy orders the errors as the fields are listed in order; fields not
// in it keep their order after those that are.
func (e FieldErrors) SortBy(order []string) {
	rank := map[string]int{}
	for i, f := range order {
		rank[f] = i + 1
	}
	sort.SliceStable(e, func(i, j int) bool {
		ri, rj := rank[e[i].Field], rank[e[j].Field]
		if ri == 0 || rj == 0 {
			return ri != 0 && rj == 0
		}
		return ri < rj
	})
}
