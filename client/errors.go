package client

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrorBody is the server's answer to a request it refuses: Error says
// why; a 400 about a field names it (Field, the first) and lists every
// bad one (Errors); a bad cell of an upload gives its Line and Column
// (1-based; column 0: the whole line); a refused POST
// /api/compare/repetitions lists the runs it cannot run again.
type ErrorBody struct {
	Error         string          `json:"error"`
	Field         string          `json:"field,omitempty"`
	Errors        []FieldMessage  `json:"errors,omitempty"`
	Line          int             `json:"line,omitempty"`
	Column        int             `json:"column,omitempty"`
	NotRerunnable []NotRerunnable `json:"not_rerunnable,omitempty"`
}

// FieldMessage is one bad field of a request.
type FieldMessage struct {
	Field string `json:"field"`
	Error string `json:"error"`
}

// NotRerunnable is a run whose configuration cannot be run again, and
// why.
type NotRerunnable struct {
	Run    uint   `json:"run"`
	Reason string `json:"reason"`
}

// Error is an answer other than the one asked for: the request, the
// status and the server's message (Body.Error, or the answer's first
// 2,000 bytes when it was no JSON error).
type Error struct {
	Method, Path string
	// StatusCode is the answer's status code (404), Status its line
	// ("404 Not Found").
	StatusCode int
	Status     string
	Message    string
	Body       ErrorBody
}

func (e *Error) Error() string {
	if e.Method == http.MethodGet {
		return fmt.Sprintf("GET %s: the server answered %s: %s", e.Path, e.Status, e.Message)
	}
	return fmt.Sprintf("the server refused it (%s): %s", e.Status, e.Message)
}

// UnreachableError is a server that did not answer (or whose answer could
// not be read). Hint, when the client has one, says what to do about it.
type UnreachableError struct {
	BaseURL string
	Hint    string
	Err     error
}

func (e *UnreachableError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("cannot reach the kbench server at %s (%s): %v", e.BaseURL, e.Hint, e.Err)
	}
	return fmt.Sprintf("cannot reach the kbench server at %s: %v", e.BaseURL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// StatusCode is err's status when it is an *Error somewhere in its chain,
// else 0.
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}
