package engram

import "context"

// User scope (docs/users.md). A tenant's data is either shared (UserID
// "") or belongs to one end user of the tenant. A read for user U sees the
// shared data and U's, never another user's; a read without a user sees
// the shared data only. Writes carry their user explicitly (Memory.UserID
// and the user_id of every request that writes); reads take the user from
// the context, where each door puts the request's user_id with
// NewContextWithUser, so that every query the request makes — pinned
// identity, persona, search, vectors, the recall record — applies the same
// rule without each signature carrying it.

type userKey struct{}

// NewContextWithUser returns ctx scoped to the end user id ("" for the
// tenant's shared data only).
func NewContextWithUser(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, userKey{}, userID)
}

// UserFromContext returns the user set by NewContextWithUser, or "".
func UserFromContext(ctx context.Context) string {
	id, _ := ctx.Value(userKey{}).(string)
	return id
}

// CheckUserID refuses a user id that is not 1-128 characters of
// A-Z a-z 0-9 . _ : - (without ".."); "" (no user) is accepted.
func CheckUserID(id string) error {
	return CheckOptionalID("user_id", id)
}

// VisibleTo reports whether a row owned by owner ("" shared) may be read
// by a request scoped to user.
func VisibleTo(owner, user string) bool {
	return owner == "" || owner == user
}

// ForgetResult counts what DELETE /v1/users/{id} erased, per kind.
type ForgetResult struct {
	UserID       string `json:"user_id"`
	Memories     int64  `json:"memories"`
	Events       int64  `json:"memory_events"`
	Vectors      int64  `json:"embeddings"`
	Help         int64  `json:"helpfulness"`
	Credits      int64  `json:"feedback_credits"`
	Sessions     int64  `json:"sessions"`
	SessionItems int64  `json:"session_events"`
	Recalls      int64  `json:"recalls"`
	Interactions int64  `json:"interactions"`
	Feedback     int64  `json:"feedback"`
	Pairs        int64  `json:"pairs"`
	Reflections  int64  `json:"reflections"`
	Rewritten    int64  `json:"reflections_rewritten"`
	MirrorFiles  int64  `json:"mirror_files"`
}

// UserService erases an end user's data from the tenant in the context.
type UserService interface {
	// ForgetUser deletes every row of the user (see ForgetResult) in one
	// transaction. EINVALID for a bad id.
	ForgetUser(ctx context.Context, userID string) (*ForgetResult, error)
}
