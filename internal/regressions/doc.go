// Package regressions finds the regressions across every series and
// tells of new ones: the change points that made a headline metric of a
// series worse (Regression), kept by a cache that a write to the store
// costs only the detection of the series it touched (Cache), and the
// webhook that posts each new one, with a Slack-compatible text
// (Notifier).
//
// It reads the series through Source, an interface that *store.Store
// satisfies, and builds the links a regression carries through Links,
// functions the pages (package ui) provide. So it links no database and
// no web framework, and imports no page: ui imports it for Regression
// (the runs list's badges, the regressions page), and the server and the
// serve command build the Cache and the Notifier over the store. Keeping
// the type and the computation in one package, rather than a package of
// types beside one that imports the store, lets tests drive the cache
// with a hand-written Source, and keeps the store the one package that
// links a database (internal/layering checks it).
package regressions
