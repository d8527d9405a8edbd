package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/engram-memory/engram"
)

// checkFields refuses what encoding/json would quietly accept: an object
// naming a field twice (anywhere, also inside free JSON such as data),
// and a field of the request spelt in another case ("Content"), which the
// decoder would match to content. t is the type decoded into.
func checkFields(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := walkFields(dec, t); err != nil {
		var e *engram.Error
		if errors.As(err, &e) {
			return e
		}
		return nil // malformed JSON: the decoder reports it
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// walkFields reads one JSON value from dec, checking the objects in it
// against t (nil: free JSON, checked for duplicates only).
func walkFields(dec *json.Decoder, t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil // free JSON, or a type that reads itself
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkFields(dec, elem); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := tok.(string)
			if seen[name] {
				return engram.Errorf(engram.EINVALID, "duplicate field %q", name)
			}
			seen[name] = true
			var ft reflect.Type
			switch {
			case t == nil:
			case t.Kind() == reflect.Map:
				ft = t.Elem()
			case t.Kind() == reflect.Struct:
				f, exact, ok := jsonField(t, name)
				if ok && !exact {
					return engram.Errorf(engram.EINVALID, "unknown field %q (field names are case-sensitive: %q)", name, f)
				}
				if ok {
					ft = fieldType(t, f)
				}
			}
			if err := walkFields(dec, ft); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// jsonField finds the JSON field of struct t named name: its exact
// name, whether name matched exactly, and whether any field matched
// (case-insensitively, as encoding/json matches).
func jsonField(t reflect.Type, name string) (string, bool, bool) {
	folded := ""
	for _, f := range jsonFields(t) {
		if f == name {
			return f, true, true
		}
		if folded == "" && strings.EqualFold(f, name) {
			folded = f
		}
	}
	return folded, false, folded != ""
}

// jsonFields lists the JSON names of struct t's fields, embedded structs'
// fields included.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// fieldType is the Go type of struct t's JSON field name.
func fieldType(t reflect.Type, name string) reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if inner := fieldType(ft, name); inner != nil {
					return inner
				}
				continue
			}
		}
		if tag == name || (tag == "" && f.Name == name) {
			return f.Type
		}
	}
	return nil
}
