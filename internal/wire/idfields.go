package wire

import (
	"reflect"
	"strings"

	"github.com/engram-memory/engram"
)

// idFields are the names the client contract gives to session, resource
// and agent ids, in bodies, tool arguments and query strings alike.
var idFields = map[string]bool{"session_id": true, "resource_id": true, "agent_id": true, "user_id": true}

// CheckParam checks one named request value (a query parameter): a
// session, resource or agent id must pass engram.CheckID; "" means not
// set. Other names are not checked here.
func CheckParam(name, value string) error {
	if !idFields[name] {
		return nil
	}
	return engram.CheckOptionalID(name, value)
}

// checkIDs checks every session, resource and agent id in v, a decoded
// request (Decode's dst): each string field whose JSON name is
// session_id, resource_id or agent_id, in nested structs, pointers and
// slices too (a batch's items), must pass engram.CheckID unless it is
// empty. Every door decodes with Decode, so an id is refused alike on
// every route and tool that takes it (a recall's session_id is recorded,
// an agent id names a persona's key), whatever the service behind it
// checks. name is v's JSON name ("" for a slice element or the top).
func checkIDs(v reflect.Value, name string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkIDs(v.Elem(), name)
	case reflect.String:
		return CheckParam(name, v.String())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // json.RawMessage: free JSON, not an id
		}
		for i := range v.Len() {
			if err := checkIDs(v.Index(i), ""); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if err := checkIDs(v.Field(i), tag); err != nil {
				return err
			}
		}
	}
	return nil
}
