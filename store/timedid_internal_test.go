package store

import (
	"strings"
	"testing"
	"time"
)

// TestTimedIDs: a feedback or recall id gives back the millisecond it was
// made, ids made together share their leading characters (so a group's
// rows fall in neighbouring index pages), and ids made in the same
// millisecond still differ.
func TestTimedIDs(t *testing.T) {
	before := time.Now().Truncate(time.Millisecond)
	first := newFeedbackID()
	second := newFeedbackID()
	after := time.Now()
	for _, id := range []string{first, second} {
		at, ok := timedIDTime("fb", id)
		if !strings.HasPrefix(id, "fb_") || len(id) != len("fb_")+26 || !ok || at.Before(before) || at.After(after) {
			t.Errorf("feedback id %q tells %v (%v): want fb_, 26 characters and a time in [%v, %v]", id, at, ok, before, after)
		}
	}
	if first[:8] != second[:8] {
		t.Errorf("feedback ids made together %q and %q share no leading characters", first, second)
	}
	seen := map[string]bool{}
	for range 1000 {
		id := newFeedbackID()
		if seen[id] {
			t.Fatalf("feedback id %q made twice", id)
		}
		seen[id] = true
	}
	rec := newRecallID()
	if at, ok := recallTime(rec); !ok || at.Before(before) || at.After(time.Now()) {
		t.Errorf("recall id %q tells %v (%v), want a time from %v on", rec, at, ok, before)
	}
}
