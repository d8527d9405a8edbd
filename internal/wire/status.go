package wire

import (
	"encoding/json"
	"net/http"

	"github.com/engram-memory/engram"
)

// Codes that only a door uses: no service returns them.
const (
	// EMETHOD is a known path with a method it does not serve (405).
	EMETHOD = "method_not_allowed"
	// EFORBIDDEN is a form post the console refuses: no valid CSRF token,
	// or a switch of tenant by a key that may not (403).
	EFORBIDDEN = "forbidden"
)

// statuses maps every error code to its HTTP status. It is the only such
// table: REST, MCP over HTTP and the console all answer through Status.
var statuses = map[string]int{
	engram.EINVALID:       http.StatusBadRequest,
	engram.EUNAUTHORIZED:  http.StatusUnauthorized,
	engram.ENOTFOUND:      http.StatusNotFound,
	engram.ECONFLICT:      http.StatusConflict,
	engram.ETOOLARGE:      http.StatusRequestEntityTooLarge,
	engram.EUNSUPPORTED:   http.StatusUnsupportedMediaType,
	engram.EUNPROCESSABLE: http.StatusUnprocessableEntity,
	engram.EQUOTA:         http.StatusForbidden,
	engram.ERATELIMITED:   http.StatusTooManyRequests,
	engram.EINTERNAL:      http.StatusInternalServerError,
	EMETHOD:               http.StatusMethodNotAllowed,
	EFORBIDDEN:            http.StatusForbidden,
}

// Status returns the HTTP status of err and the code a client is shown:
// err's code, or EINTERNAL (500) for an error that is not an
// engram.Error or whose code has no status. It must not be called with
// a nil error.
func Status(err error) (int, string) {
	code := engram.ErrorCode(err)
	status, ok := statuses[code]
	if !ok {
		return http.StatusInternalServerError, engram.EINTERNAL
	}
	return status, code
}

// ErrorBody is the one error shape of every door,
// {"error":{"code","message"}}: the code Status shows, and err's
// client-safe message ("internal error" for an internal one).
func ErrorBody(err error) []byte {
	_, code := Status(err)
	msg := engram.ErrorMessage(err)
	if code == engram.EINTERNAL {
		msg = "internal error"
	}
	type detail struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		Error detail `json:"error"`
	}{detail{code, msg}})
	return b
}
