package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/store"
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

// errTooLarge marks a body over the configured limit.
var errTooLarge = errors.New("request body too large")

// classify maps an error to an HTTP status, the field it concerns (for
// 400s) and the message users see. It is the one place that decides.
func classify(err error) (status int, field, msg string) {
	var ie *inputError
	var fe *runner.FieldError
	var mbe *http.MaxBytesError
	var le *limitError
	switch {
	case errors.As(err, &ie):
		return http.StatusBadRequest, ie.Field, ie.Error()
	case errors.As(err, &le):
		return http.StatusRequestEntityTooLarge, le.field, le.Error()
	case errors.As(err, &fe):
		return http.StatusBadRequest, fe.Field, fe.Field + ": " + fe.Msg
	case errors.As(err, &mbe), errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge, "", "request body too large"
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, "", "not found"
	case errors.Is(err, store.ErrConflict):
		return http.StatusConflict, "", strings.TrimPrefix(err.Error(), "store: ")
	}
	return http.StatusInternalServerError, "", "internal error"
}

// fail answers a request with err: JSON for the API, a page otherwise.
// Server errors are logged; users see a short message.
func (s *Server) fail(c *gin.Context, err error) {
	status, field, msg := classify(err)
	if status >= 500 {
		s.log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
	}
	if isAPI(c) {
		body := gin.H{"error": msg}
		if field != "" {
			body["field"] = field
		}
		c.AbortWithStatusJSON(status, body)
		return
	}
	v := ui.NewErrorView(status, msg)
	v.Page = s.page(c, v.Title)
	s.render(c, status, "error", v)
	c.Abort()
}

func isAPI(c *gin.Context) bool { return strings.HasPrefix(c.Request.URL.Path, "/api/") }

// decodeJSON reads a JSON request body into v, strictly: unknown fields,
// wrong types and malformed JSON are input errors naming the field (or
// "body"); a body over the limit stays a *http.MaxBytesError (413).
func decodeJSON(c *gin.Context, v any) error {
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var mbe *http.MaxBytesError
	var ute *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mbe):
		return err
	case errors.As(err, &ute):
		return badInput(ute.Field, "must be a %s", ute.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badInput(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "unknown field")
	}
	return badInput("body", "invalid JSON: %v", err)
}
