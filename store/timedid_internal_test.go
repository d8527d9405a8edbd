package store

import (
	"strings"
	"testing"
	"time"
)

// TestTimedIDs: feedback and recall ids made later sort after those made
// earlier (so a group's rows share the end of the indexes keyed by them),
// ids made in the same millisecond still differ, and a recall id gives
// back its time.
func TestTimedIDs(t *testing.T) {
	first := newFeedbackID()
	time.Sleep(2 * time.Millisecond)
	second := newFeedbackID()
	if !strings.HasPrefix(first, "fb_") || len(first) != len("fb_")+26 || first >= second {
		t.Errorf("feedback ids %q then %q: want fb_ and 26 characters, in order", first, second)
	}
	seen := map[string]bool{}
	for range 1000 {
		id := newFeedbackID()
		if seen[id] {
			t.Fatalf("feedback id %q made twice", id)
		}
		seen[id] = true
	}
	before := time.Now().Truncate(time.Millisecond)
	rec := newRecallID()
	if at, ok := recallTime(rec); !ok || at.Before(before) || at.After(time.Now()) {
		t.Errorf("recall id %q tells %v (%v), want a time from %v on", rec, at, ok, before)
	}
}
