package engram_test

import (
	"testing"

	"github.com/engram-memory/engram"
)

func TestBudget(t *testing.T) {
	for _, tt := range []struct {
		budget, max int
		ok          bool
	}{{1, 8000, true}, {8000, 8000, true}, {0, 8000, false}, {-5, 8000, false}, {8001, 8000, false}} {
		err := engram.CheckBudget("token_limit", tt.budget, tt.max)
		if (err == nil) != tt.ok || err != nil && (engram.ErrorCode(err) != engram.EINVALID || engram.ErrorMessage(err) != "token_limit must be between 1 and 8000") {
			t.Errorf("CheckBudget(%d, %d) = %v", tt.budget, tt.max, err)
		}
	}
	if engram.DefaultBudget(8000) != 1000 || engram.DefaultBudget(300) != 300 {
		t.Errorf("default budget: %d, %d", engram.DefaultBudget(8000), engram.DefaultBudget(300))
	}
}
