package ui

import "strconv"

// ErrorView is the page shown for a failed request.
type ErrorView struct {
	Page
	Status  int
	Message string
}

// statusTitles name the statuses kbench answers with.
var statusTitles = map[int]string{
	400: "Bad request",
	403: "Forbidden",
	404: "Not found",
	405: "Method not allowed",
	409: "Conflict",
	413: "Too large",
	429: "Too many requests",
	500: "Internal error",
	502: "Bad gateway",
	503: "Unavailable",
}

// NewErrorView builds an error page for an HTTP status and a short
// message for users; an empty message becomes the status's title.
func NewErrorView(status int, message string) ErrorView {
	title, ok := statusTitles[status]
	if !ok {
		title = "Error " + strconv.Itoa(status)
	}
	if message == "" {
		message = title
	}
	return ErrorView{Page: Page{Title: title}, Status: status, Message: message}
}
