package main

import (
	"io"
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-kbench", "kb", "-out", "o", "-only", "counts, syscalls", "-ff-workloads", "consumer"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.only[areaCounts] || !cfg.only[areaSyscalls] || cfg.only[areaCPU] || len(cfg.only) != 2 {
		t.Errorf("only = %v", cfg.only)
	}
	if cfg.summary != "o/summary.md" || strings.Join(cfg.ffWorkloads, ",") != "consumer" || cfg.ffN != 5 || cfg.ffBatches != 4 {
		t.Errorf("summary %q, workloads %v, n %d, batches %d", cfg.summary, cfg.ffWorkloads, cfg.ffN, cfg.ffBatches)
	}
	for _, bad := range [][]string{
		{},
		{"-kbench", "kb"},
		{"-kbench", "kb", "-out", "o", "-only", "counts,speed"},
		{"-kbench", "kb", "-out", "o", "-ff-workloads", "writepath"},
		{"-kbench", "kb", "-out", "o", "-strace", "maybe"},
		{"-kbench", "kb", "-out", "o", "-ff-submit", "bulk"},
		{"-kbench", "kb", "-out", "o", "-consume-records", "2000000", "-raw-records", "1000000"},
		{"-kbench", "kb", "-out", "o", "-poll", "0s"},
		{"-kbench", "kb", "-out", "o", "extra"},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("parseFlags(%q): no error", bad)
		}
	}
}
