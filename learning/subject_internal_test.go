package learning

import (
	"testing"

	"github.com/engram-memory/engram"
)

// TestSameSubject: the reading of subject.go, pair by pair, with the
// subject it names.
func TestSameSubject(t *testing.T) {
	for _, c := range []struct {
		a, b    engram.Memory
		same    bool
		subject string
	}{
		{engram.Memory{Content: "Maya Ruiz: Has a dog named Waffles"}, engram.Memory{Content: "Gavin Ruiz: Has a dog named Waffles"}, false, ""},
		{engram.Memory{Content: "Maya Ruiz: Lives in Lisbon"}, engram.Memory{Content: "Maya Ruiz: Lives in Oslo"}, true, "Maya Ruiz / Lives"},
		{engram.Memory{Content: "Maya Ruiz: Lives in Lisbon"}, engram.Memory{Content: "Maya Ruiz: Works as a baker"}, false, ""},
		{engram.Memory{Content: "Maya Ruiz lives in Lisbon"}, engram.Memory{Content: "Gavin Ruiz lives in Lisbon"}, false, ""},
		{engram.Memory{Content: "Maya Ruiz lives in Lisbon"}, engram.Memory{Content: "Maya Ruiz lives in Oslo"}, true, "Maya Ruiz / lives"},
		{engram.Memory{Content: "Maya Ruiz lives in Lisbon"}, engram.Memory{Content: "Maya Ruiz works in Lisbon"}, false, ""},
		{engram.Memory{Content: "Dana's favourite tea is jasmine"}, engram.Memory{Content: "Dana's favourite tea is oolong"}, true, "Dana / favourite tea"},
		{engram.Memory{Content: "Caroline: I went hiking"}, engram.Memory{Content: "Melanie: I went hiking"}, false, ""},
		{engram.Memory{Content: "In 2024, Maya Ruiz moved to Lisbon"}, engram.Memory{Content: "In 2024, Gavin Ruiz moved to Lisbon"}, false, ""},
		{engram.Memory{Content: "In 2024, Maya Ruiz moved to Lisbon"}, engram.Memory{Content: "In 2024, Maya Ruiz moved to Oslo"}, true, "2024 Maya Ruiz moved"},
		{engram.Memory{Content: "Maya: Lives in Lisbon with Tom"}, engram.Memory{Content: "Maya: Lives in Oslo with Tom"}, true, "Maya / Lives"},
		{engram.Memory{Content: "Caroline: I went hiking"}, engram.Memory{Content: "I went hiking"}, false, ""},
		{engram.Memory{Key: "/people/maya/home", Content: "Lives in Lisbon"}, engram.Memory{Key: "/people/maya/home-2", Content: "Lives in Oslo"},
			true, "/people/maya / Lives"},
		{engram.Memory{Key: "/people/maya/home", Content: "Lives in Lisbon"}, engram.Memory{Key: "/people/gavin/home", Content: "Lives in Lisbon"}, false, ""},
		{engram.Memory{Key: "/people/maya/home", Content: "Lives in Lisbon"}, engram.Memory{Content: "Lives in Lisbon"}, false, ""},
		{engram.Memory{Content: "The key is under the mat", Tags: []string{"subject:House/Key"}},
			engram.Memory{Content: "Ask Pat for it", Tags: []string{"x", "Subject:house/key"}}, true, "house/key"},
		{engram.Memory{Content: "The key is under the mat", Tags: []string{"subject:house/key"}},
			engram.Memory{Content: "The key is under the mat", Tags: []string{"subject:car/key"}}, false, ""},
		{engram.Memory{Content: "The key is under the mat", Tags: []string{"subject:house/key"}},
			engram.Memory{Content: "The key is under the mat"}, false, ""},
	} {
		a, b := read(&c.a), read(&c.b)
		subject, same := sameSubject(&a, &b)
		if same != c.same || same && subject != c.subject {
			t.Errorf("%q / %q: same %v subject %q, want %v %q", c.a.Content, c.b.Content, same, subject, c.same, c.subject)
		}
	}
}
