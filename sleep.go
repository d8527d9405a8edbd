package engram

import "context"

// SleepResult counts what one sleep of one tenant did.
type SleepResult struct {
	Merged           int            `json:"merged"`   // near duplicates folded into another memory
	Archived         int            `json:"archived"` // decayed below sleep.archive_below
	Expired          int            `json:"expired"`  // past expires_at, taken out of the active set
	EventsFolded     int64          `json:"events_folded"`
	EventBytesBefore int64          `json:"event_bytes_before"` // the event log's size before folding
	EventBytesAfter  int64          `json:"event_bytes_after"`  // and after
	Reflect          *ReflectResult `json:"reflect"`
	Conflicts        int            `json:"conflicts"` // changes skipped because a memory changed meanwhile
	// Linked is how many same_entity links the sleep made between
	// memories naming the same rare entity (see docs/links.md).
	Linked int `json:"linked"`
}

// Changed reports whether the sleep changed anything.
func (r *SleepResult) Changed() bool {
	return r.Merged+r.Archived+r.Expired+r.Linked > 0 || r.EventsFolded > 0 || r.Reflect != nil && len(r.Reflect.Written) > 0
}

// SleepService runs the sleep cycle (DESIGN §5) for the tenant in the
// context: merge near duplicates, archive what decayed or expired, fold old
// feedback events, re-reflect the groups that changed.
type SleepService interface {
	Sleep(ctx context.Context) (*SleepResult, error)
}
