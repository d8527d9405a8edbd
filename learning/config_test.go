package learning

import (
	"reflect"
	"testing"

	"github.com/engram-memory/engram/configs"
)

// The configuration's defaults are the design's constants.
func TestConfigDefaultsMatch(t *testing.T) {
	if got, want := NewScoreConfig(configs.Default().Scoring), DefaultScoreConfig(); !reflect.DeepEqual(got, want) {
		t.Fatalf("scoring defaults differ:\n config %+v\n code   %+v", got, want)
	}
	if got, want := NewRecallConfig(configs.Default().Recall), DefaultRecallConfig(); got != want {
		t.Fatalf("recall defaults differ: %+v vs %+v", got, want)
	}
	if got, want := NewFeedbackConfig(configs.Default().Feedback), DefaultFeedbackConfig(); got != want {
		t.Fatalf("feedback defaults differ: %+v vs %+v", got, want)
	}
	if err := NewScoreConfig(configs.Default().Scoring).Validate(); err != nil {
		t.Fatal(err)
	}
}
