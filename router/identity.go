package router

import (
	"strings"

	"github.com/engram-memory/engram"
)

// The identity rule. A route asks for the pinned identity block when the
// answer depends on who the user is:
//
//   - the query is about the user: it speaks in the first person singular
//     (I, me, my, mine, myself, I'm, I've; 我 and 俺, not 我们), once the
//     frames that only address the assistant are set aside ("tell me",
//     "remind me", 告诉我, 我想知道): "remind me when the team ships" is
//     about the team;
//   - it asks for a choice made for the user (intent decide), which must
//     fit them whoever they are;
//   - its best domain is preference, the user's own tastes, even when it
//     names no one ("vegetarian places near the office").
//
// The first person plural is not the user: "when do we ship?" asks about a
// team, and its answer is the same for everyone in it.

// identityFrames address the assistant; they are removed before the first
// person is looked for. Longer frames come first, so that "can you tell
// me" goes before "tell me" could leave "can you" behind (harmless, as it
// names no one).
var identityFrames = compileCues(cues(0, `i_want_to_know i_need_to_know i_wonder* i_was_wondering
	can_you_tell_me could_you_tell_me tell_me remind_me show_me give_me help_me let_me_know fill_me_in
	catch_me_up update_me walk_me_through
	我想知道 我想问 我想了解 告诉我 提醒我 给我讲 给我说 跟我说 帮我查 帮我找 帮我看`))

// firstPersonWords are the English first person singular forms, as
// normalize leaves them (apostrophes dropped: "I'm" → "im"); "id" (I'd)
// and "ill" (I'll) are left out, as they are more often words of their own.
var firstPersonWords = map[string]bool{"i": true, "me": true, "my": true, "mine": true, "myself": true,
	"im": true, "ive": true}

// needsIdentity applies the identity rule to a normalised query with its
// intent and domains (best first).
func needsIdentity(text string, intent engram.Intent, domains []engram.DomainScore, threshold float64) bool {
	if intent == engram.IntentDecide {
		return true
	}
	if len(domains) > 0 && domains[0].Name == engram.CategoryPreference && domains[0].Score >= threshold {
		return true
	}
	return firstPerson(text)
}

// firstPerson reports whether a normalised query speaks of the user in the
// first person singular outside the frames that address the assistant.
func firstPerson(text string) bool {
	for _, f := range identityFrames {
		text = strings.ReplaceAll(text, f.pattern, " ")
	}
	for _, w := range strings.Fields(text) {
		if firstPersonWords[w] {
			return true
		}
	}
	for i, r := range text {
		if r == '俺' || r == '我' && !strings.HasPrefix(text[i+len("我"):], "们") {
			return true
		}
	}
	return false
}
