// Package regressions finds the regressions across every series: the
// change points that made a headline metric of a series worse
// (Regression), kept by a cache that a write to the store costs only the
// detection of the series it touched (Cache). Its sub-package notify
// posts each new one to a webhook.
//
// It reads the series through Source, an interface that *store.Store
// satisfies, and builds the links a regression carries through Links,
// functions the pages (package ui) provide. So it links no database, no
// web framework and no HTTP client, and imports no page: ui imports it
// for Regression (the runs list's badges, the regressions page), and the
// serve command builds the Cache over the store. Keeping the type and the
// computation in one package, rather than a package of types beside one
// that imports the store, lets tests drive the cache with a hand-written
// Source, and keeps the store the one package that links a database
// (internal/layering checks it).
package regressions
