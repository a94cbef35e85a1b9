package ui

// LoginView is the page asking for the server's access token.
type LoginView struct {
	Page
	// Next is where to go after logging in; the form sends it back.
	Next string
	// Error is shown above the form, e.g. "wrong token".
	Error string
	// NoToken says the server has no token: there is nothing to log in
	// to, and the page says so instead of asking for one.
	NoToken bool
}
