package engram

// defaultBudget is DefaultBudget's answer when max_budget allows it.
const defaultBudget = 1000

// CheckBudget is the one check of every token budget and limit a caller
// names (a recall's token_budget, the token_limit of boot, the read block
// and a session's context, a prompt's token_budget), whatever the door:
// EINVALID, naming the field, unless budget is in [1, maxBudget]
// (recall.max_budget).
func CheckBudget(name string, budget, maxBudget int) error {
	if budget < 1 || budget > maxBudget {
		return Errorf(EINVALID, "%s must be between 1 and %d", name, maxBudget)
	}
	return nil
}

// DefaultBudget is the token budget of a recall, boot or prompt whose
// caller names none, where a door allows that (MCP: a model rarely knows
// what to ask for): 1,000 tokens, never more than maxBudget.
func DefaultBudget(maxBudget int) int {
	return min(defaultBudget, maxBudget)
}
