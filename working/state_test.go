package working

import (
	"encoding/json"
	"testing"
)

// TestMergePatch runs the examples of RFC 7396, Appendix A.
func TestMergePatch(t *testing.T) {
	for _, tc := range [][3]string{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		{`{"n":12345678901234567890}`, `{"m":1.50}`, `{"m":1.50,"n":12345678901234567890}`},
	} {
		target, err := decodeJSON(json.RawMessage(tc[0]))
		if err != nil {
			t.Fatal(err)
		}
		patch, err := decodeJSON(json.RawMessage(tc[1]))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(MergePatch(target, patch))
		if string(got) != tc[2] {
			t.Errorf("merge %s with %s: %s, want %s", tc[0], tc[1], got, tc[2])
		}
	}
}
