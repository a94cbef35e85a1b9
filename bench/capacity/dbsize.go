package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

// cmdDBSize writes pg_database_size of the current database every
// interval (a line "unix_seconds<TAB>bytes") until it is stopped, then
// prints the largest and the last size it read.
func cmdDBSize(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dbsize", flag.ExitOnError)
	dbURL := fs.String("database", "", "the shared PostgreSQL URL")
	out := fs.String("out", "", "file to append the samples to")
	every := fs.Duration("every", time.Second, "sampling interval")
	fs.Parse(args)
	if *dbURL == "" || *out == "" {
		return errors.New("need -database and -out")
	}
	db, err := openDB(*dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	var peak, last int64
	for {
		// Its own short deadline: a sample that cannot be read in time is
		// skipped, not waited for.
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		var size int64
		err := db.QueryRowContext(qctx, `SELECT pg_database_size(current_database())`).Scan(&size)
		cancel()
		if err == nil {
			fmt.Fprintf(f, "%.3f\t%d\n", float64(time.Now().UnixMilli())/1000, size)
			peak, last = max(peak, size), size
		}
		select {
		case <-ctx.Done():
			fmt.Printf(`{"peak_bytes":%d,"last_bytes":%d}`+"\n", peak, last)
			return nil
		case <-time.After(*every):
		}
	}
}
