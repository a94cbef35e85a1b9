package server

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/internal/runimport"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/ui"
)

// inputError is invalid input for one field of a request.
type inputError struct {
	Field string
	Msg   string
}

func (e *inputError) Error() string { return e.Field + ": " + e.Msg }

func badInput(field, format string, args ...any) error {
	return &inputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// asFieldError turns an *inputError into the rundoc.FieldError a
// rundoc.FieldErrors collects; any other error is returned as it is.
func asFieldError(err error) error {
	var ie *inputError
	if errors.As(err, &ie) {
		return &rundoc.FieldError{Field: ie.Field, Msg: ie.Msg}
	}
	return err
}

// retryLaterError is a request refused for now (429); the handler sets
// Retry-After.
type retryLaterError struct{ msg string }

func (e *retryLaterError) Error() string { return e.msg }

// errTooLarge marks a body over the configured limit.
var errTooLarge = errors.New("request body too large")

// classify maps an error to an HTTP status, the field it concerns (for
// 400s) and the message users see. It is the one place that decides.
func classify(err error) (status int, field, msg string) {
	var ie *inputError
	var fe *rundoc.FieldError
	var mbe *http.MaxBytesError
	var le *limitError
	var ile *runimport.LimitError
	var ce *store.CorruptError
	var rl *retryLaterError
	switch {
	case errors.As(err, &rl):
		return http.StatusTooManyRequests, "", rl.msg
	case errors.As(err, &ie):
		return http.StatusBadRequest, ie.Field, ie.Error()
	case errors.As(err, &le):
		return http.StatusRequestEntityTooLarge, le.field, le.Error()
	case errors.As(err, &ile):
		return http.StatusRequestEntityTooLarge, ile.Field, ile.Error()
	case errors.As(err, &fe):
		return http.StatusBadRequest, fe.Field, fe.Field + ": " + fe.Msg
	case errors.Is(err, launch.ErrQueueFull):
		return http.StatusTooManyRequests, "", err.Error()
	case errors.As(err, &mbe), errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge, "", "request body too large"
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, "", "not found"
	case errors.Is(err, store.ErrConflict):
		return http.StatusConflict, "", strings.TrimPrefix(err.Error(), "store: ")
	case errors.As(err, &ce):
		// The server's fault, not the request's, but users need to know
		// why a profile no longer opens: it says nothing of the bytes.
		return http.StatusInternalServerError, "", ce.Error()
	}
	return http.StatusInternalServerError, "", "internal error"
}

// fieldMessage is one bad field of a request, as a 400 lists them.
type fieldMessage struct {
	Field string `json:"field"`
	Error string `json:"error"`
}

// fieldMessages lists every bad field err holds (a rundoc.FieldErrors
// holds several), in order, each with the message classify gives it.
func fieldMessages(err error) []fieldMessage {
	var out []fieldMessage
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case *inputError:
			out = append(out, fieldMessage{e.Field, e.Error()})
		case *rundoc.FieldError:
			out = append(out, fieldMessage{e.Field, e.Field + ": " + e.Msg})
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// formErrors maps each bad field of err to its messages without the
// field's name, which a form shows beside the field itself: one a line,
// every rule the field breaks (ui.ErrorLines).
func formErrors(err error) map[string]string {
	out := map[string]string{}
	for _, fm := range fieldMessages(err) {
		out[fm.Field] = joinLines(out[fm.Field], strings.TrimPrefix(fm.Error, fm.Field+": "))
	}
	return out
}

// joinLines adds msg to a field's messages, one a line, once.
func joinLines(prev, msg string) string {
	msg = strings.ReplaceAll(msg, "\n", " ")
	switch {
	case prev == "":
		return msg
	case slices.Contains(strings.Split(prev, "\n"), msg):
		return prev
	}
	return prev + "\n" + msg
}

// fail answers a request with err: JSON for the API, a page otherwise.
// Server errors are logged; users see a short message. A 400 names the
// first bad field in "error" and "field", and every one in "errors".
func (s *Server) fail(c *gin.Context, err error) {
	status, field, msg := classify(err)
	if status >= 500 {
		s.log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
	}
	var all []fieldMessage
	if status == http.StatusBadRequest && field != "" {
		if all = fieldMessages(err); len(all) == 0 {
			all = []fieldMessage{{field, msg}}
		}
	}
	if isAPI(c) {
		body := gin.H{"error": msg}
		if field != "" {
			body["field"] = field
			body["errors"] = all
		}
		// A bad cell of an uploaded file (a CSV back-fill's, a table's):
		// its 400 gives the cell's line and column (1-based; column 0
		// when the error is about a whole line) beside the field.
		var ce *runimport.CellError
		if status == http.StatusBadRequest && errors.As(err, &ce) {
			body["line"], body["column"] = ce.Line, ce.Column
		}
		if refused, ok := notRerunnable(err); ok {
			body["not_rerunnable"] = refused
		}
		c.AbortWithStatusJSON(status, body)
		return
	}
	if len(all) > 1 {
		msgs := make([]string, len(all))
		for i, fm := range all {
			msgs[i] = fm.Error
		}
		msg = strings.Join(msgs, "; ")
	}
	v := ui.NewErrorView(status, msg)
	v.Page = s.page(c, v.Title)
	s.render(c, status, "error", v)
	c.Abort()
}

func isAPI(c *gin.Context) bool { return strings.HasPrefix(c.Request.URL.Path, "/api/") }

var errNotFound = fmt.Errorf("server: %w", store.ErrNotFound)
