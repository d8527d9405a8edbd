package web

import (
	"errors"
	"net/http"
	"testing"

	"github.com/engram-memory/engram"
)

// TestStatusOfMatchesTheAPI: the console answers every code with the
// status the API gives it (one table, internal/wire), too_large and the
// quota and rate codes included, where it once kept a map of its own.
func TestStatusOfMatchesTheAPI(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{engram.Errorf(engram.ETOOLARGE, "x"), http.StatusRequestEntityTooLarge},
		{engram.Errorf(engram.EUNSUPPORTED, "x"), http.StatusUnsupportedMediaType},
		{engram.Errorf(engram.EUNPROCESSABLE, "x"), http.StatusUnprocessableEntity},
		{engram.Errorf(engram.EQUOTA, "x"), http.StatusForbidden},
		{engram.Errorf(engram.ERATELIMITED, "x"), http.StatusTooManyRequests},
		{engram.Errorf(engram.EINVALID, "x"), http.StatusBadRequest},
		{engram.Errorf(engram.ENOTFOUND, "x"), http.StatusNotFound},
		{&engram.Error{Code: errForbidden, Message: "x"}, http.StatusForbidden},
		{errors.New("disk on fire"), http.StatusInternalServerError},
	} {
		if got := statusOf(tc.err); got != tc.want {
			t.Errorf("statusOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
