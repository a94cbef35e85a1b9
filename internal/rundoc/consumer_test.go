package rundoc

import (
	"errors"
	"strings"
	"testing"
)

// TestConsumerTopicsSpec: the consumer takes --topics, --subscriptions
// and --consumers-per-subscription, and refuses the combinations that
// cannot read every record once per subscription, naming the flag.
func TestConsumerTopicsSpec(t *testing.T) {
	s, err := ParseArgs(Consumer, []string{"--topics", "3", "--subscriptions", "2", "--consumers-per-subscription", "4", "--messages", "300"})
	if err != nil {
		t.Fatal(err)
	}
	if subs, members, ok := s.Groups(); s.Topics != 3 || subs != 2 || members != 4 || !ok {
		t.Errorf("spec: topics %d, groups %d × %d (%v)", s.Topics, subs, members, ok)
	}
	for _, args := range [][]string{
		{"--topics", "2", "--mode", "assign"},
		{"--subscriptions", "2"}, // --topic, read from its start
		{"--consumers-per-subscription", "3", "--duration", "5"},
		{"--topics", "1", "--subscriptions", "1", "--warmup-records", "10", "--messages", "100"},
	} {
		if _, err := ParseArgs(Consumer, args); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	tests := []struct {
		args  []string
		field string
		msg   string
	}{
		{[]string{"--topics", "-1"}, "topics", "between 1 and 10000"},
		{[]string{"--topics", "10001"}, "topics", "between 1 and 10000"},
		{[]string{"--topics", "2", "--from-latest"}, "topics", "--from-latest would skip those records"},
		{[]string{"--subscriptions", "-2"}, "subscriptions", "between 1 and 100"},
		{[]string{"--consumers-per-subscription", "101"}, "consumers-per-subscription", "between 1 and 100"},
		{[]string{"--subscriptions", "2", "--mode", "assign"}, "subscriptions", "applies to --mode group"},
		{[]string{"--consumers-per-subscription", "2", "--mode", "assign"}, "consumers-per-subscription", "applies to --mode group"},
		{[]string{"--subscriptions", "2", "--from-latest"}, "subscriptions", "not with --from-latest"},
		{[]string{"--consumers-per-subscription", "2", "--from-latest"}, "consumers-per-subscription", "not with --from-latest"},
	}
	for _, tt := range tests {
		_, err := ParseArgs(Consumer, tt.args)
		var fe FieldErrors
		if !errors.As(err, &fe) || !fe.Has(tt.field) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%q: %v, want %s: …%s…", tt.args, err, tt.field, tt.msg)
		}
	}
}
