// Command vacuum compacts a SQLite file in place (VACUUM) and puts it back
// in rollback-journal mode, so a fixture database is small and one file.
//
//	go run ./server/testdata/upgrade/vacuum FILE
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "github.com/mattn/go-sqlite3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: vacuum FILE")
		os.Exit(2)
	}
	db, err := sql.Open("sqlite3", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "vacuum:", err)
		os.Exit(1)
	}
	defer db.Close()
	for _, q := range []string{"PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA journal_mode=DELETE", "VACUUM"} {
		if _, err := db.Exec(q); err != nil {
			fmt.Fprintf(os.Stderr, "vacuum: %s: %v\n", q, err)
			os.Exit(1)
		}
	}
}
