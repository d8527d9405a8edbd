package engram

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to one HTTP status in server/error.go.
const (
	EINVALID      = "invalid"      // malformed or out-of-range input
	EUNAUTHORIZED = "unauthorized" // missing, unknown or revoked API key
	ENOTFOUND     = "not_found"    // no such object in the caller's tenant
	ECONFLICT     = "conflict"     // stale version or unique constraint
	ETOOLARGE     = "too_large"    // body or field above a configured limit
	EUNSUPPORTED  = "unsupported"  // unsupported media type
	EINTERNAL     = "internal"     // anything else; message never shown

	EUNPROCESSABLE = "unprocessable"  // well-formed, but fails its JSON Schema
	EQUOTA         = "quota_exceeded" // the tenant's quota (memories, bytes, sessions) is used up
	ERATELIMITED   = "rate_limited"   // too many failed attempts from one client; retry later
)

// Error is the one error type of engram. Code is machine-readable, Message
// is safe to show to the client. Errors that are not *Error are internal.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("engram error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err: the *Error's message,
// or "internal error" for anything else.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
