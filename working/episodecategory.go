package working

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/engram-memory/engram"
)

// How a conversation message is filed. The router reads a message's
// words, not who said it or whether it asks or states: an assistant's
// "Budget per night, and do you want dinner included?" shares the words
// of a preference, and a preference goes first into every recall's
// context (the preferences group, DESIGN §3). So the category of an
// episode is decided from what the message says about the user:
//
//   - Only the user's side states the user's preferences: a message whose
//     role (else speaker) is the assistant, the system or a tool is never
//     a preference. A message with a speaker and no role is a person in
//     the conversation (a two-person transcript), whose preferences are
//     the conversation's to remember.
//   - A question, an offer put as a question, or a greeting or thanks
//     alone states nothing: it is not a preference whatever its words.
//   - A statement of the user (role "user") that says what they like,
//     avoid or always do ("I prefer aisle seats", "我不吃辣", "my
//     favourite…") is a preference even where the router saw only a
//     topic (work, life); an aspect the router found (emotion, strategy)
//     stays. A named speaker without a role keeps the router's reading:
//     in a transcript of several people "You know I love live music" is
//     what was said as much as a standing preference, and filing every
//     such line as a preference put them first into recalls (LoCoMo
//     through session messages, R@10 0.702 against 0.706 over repeated
//     runs).
//   - Any other statement of the user's side the router filed as a
//     preference stays one ("Window seat, please").
//
// What is not a preference falls back to the router's best other domain.

// machineRoles are the roles (and, without a role, speakers) that never
// state the user's preferences.
var machineRoles = map[string]bool{"assistant": true, "system": true, "tool": true, "function": true, "model": true,
	"bot": true, "ai": true, "developer": true, "agent": true, "助手": true, "系统": true, "机器人": true}

// greetings are the words of a message that only greets, thanks or
// acknowledges.
var greetings = map[string]bool{"hi": true, "hello": true, "hey": true, "thanks": true, "thank": true, "you": true,
	"ok": true, "okay": true, "sure": true, "bye": true, "goodbye": true, "good": true, "morning": true, "evening": true,
	"night": true, "afternoon": true, "there": true, "cheers": true, "great": true, "cool": true, "yes": true, "no": true,
	"yeah": true, "yep": true, "so": true, "much": true, "a": true, "lot": true, "sounds": true,
	"你好": true, "您好": true, "谢谢": true, "多谢": true, "好的": true, "好": true, "嗯": true, "嗯嗯": true,
	"早上好": true, "晚上好": true, "晚安": true, "再见": true, "拜拜": true, "哈哈": true, "行": true, "可以": true}

// questionStarts are English words that open a question (or an offer put
// as one) without a question mark.
var questionStarts = map[string]bool{"what": true, "which": true, "who": true, "whom": true, "whose": true, "where": true,
	"when": true, "why": true, "how": true, "do": true, "does": true, "did": true, "would": true, "will": true, "can": true,
	"could": true, "should": true, "shall": true, "is": true, "are": true, "am": true, "was": true, "were": true,
	"have": true, "has": true, "may": true, "might": true, "want": true, "any": true}

var (
	// zhQuestion is a Chinese sentence that asks: a final particle, an
	// A-not-A choice, or a final question word.
	zhQuestion = regexp.MustCompile(`(?:[吗呢么]$|要不要|是不是|有没有|能不能|可不可以|喜不喜欢|对不对|好不好|行不行|` +
		`(?:什么|哪个|哪些|哪里|多少|几个|几点|怎么样)$)`)
	// enPreference is an English first-person statement of a liking, an
	// aversion, a habit or a constraint.
	enPreference = regexp.MustCompile(`\bi\s+(?:(?:really|just|do|don't|do not|can't|cannot|always|never|usually|generally|` +
		`absolutely|also|still|totally|mostly|much|definitely|kind of|sort of|actually|truly|strongly)\s+)*` +
		`(?:prefer|like|love|hate|dislike|enjoy|adore|avoid|detest|loathe|can't stand|cannot stand)\b|` +
		`\bi\s+(?:don't|do not|never|can't|cannot|won't|always|usually|only)\s+(?:eat|drink|fly|sit|drive|wear)\b|` +
		`\bi(?:'d| would)\s+(?:much\s+)?rather\b|` +
		`\bi(?:'m| am)\s+(?:(?:a|very|so|not|really)\s+)*(?:vegetarian|vegan|allergic|lactose|gluten|fan of|big fan|into|fond of|partial to)\b|` +
		`\bmy\s+(?:favorite|favourite|preferred|go-to)\b|` +
		`\bplease\s+(?:don't|do not|never|always|avoid)\b`)
	// zhPreference is a Chinese first-person statement of the same.
	zhPreference = regexp.MustCompile(`我(?:很|真|特别|非常|最|比较|更|一直|从来|从|都|也|还|就|平时|一般|通常|向来|完全|实在|其实|本来|真的|挺)*` +
		`(?:喜欢|爱吃|爱喝|爱看|爱听|爱玩|偏好|偏爱|讨厌|不喜欢|不爱|不吃|不喝|吃素|受不了|接受不了|习惯|宁愿|宁可|倾向|只吃|只喝|只用)|` +
		`我[^，。！？,.!?]{0,8}过敏|我的最爱|请(?:不要|别)|别给我`)
	// sentenceEnd splits a message into sentences, keeping each one's
	// final mark.
	sentenceEnd = regexp.MustCompile(`[^.!?。！？\n]+[.!?。！？]*`)
	// clauseEnd splits a sentence into clauses.
	clauseEnd = regexp.MustCompile(`[,，;；、]`)
)

// reactionObjects are the objects that make "I love it" a reaction to
// what was just said, not a preference.
var reactionObjects = map[string]bool{"it": true, "that": true, "this": true, "you": true, "them": true, "those": true, "these": true}

// EpisodeCategory returns the category a conversation message is filed
// under as an episode, from the router's route of its text (see the rule
// above): preference only for a statement of the user's side that states
// a preference, else the router's best domain that is not preference.
func EpisodeCategory(e *engram.SessionEvent, route *engram.Route) string {
	if route == nil || len(route.Domains) == 0 {
		return ""
	}
	best := route.Domains[0].Name
	if userSide(e) {
		statements := statements(e.Content)
		if len(statements) > 0 && !greeting(e.Content) {
			if best == engram.CategoryPreference {
				return best
			}
			if userRole(e) && best != engram.CategoryEmotion && best != engram.CategoryStrategy && statesPreference(statements) {
				return engram.CategoryPreference
			}
		}
	}
	if best != engram.CategoryPreference {
		return best
	}
	for _, d := range route.Domains[1:] {
		if d.Name != engram.CategoryPreference {
			return d.Name
		}
	}
	return engram.CategoryLife
}

// userSide says whether a message is the user's side of the conversation:
// its role, else its speaker, is not a machine's.
func userSide(e *engram.SessionEvent) bool {
	who := strings.ToLower(strings.TrimSpace(e.Role))
	if who == "" {
		who = strings.ToLower(strings.TrimSpace(e.Speaker))
	}
	return !machineRoles[who]
}

// userRole says whether a message's role names the user the memory serves.
func userRole(e *engram.SessionEvent) bool {
	r := strings.TrimSpace(e.Role)
	return strings.EqualFold(r, "user") || strings.EqualFold(r, "human")
}

// statements returns the sentences of text that do not ask, lower-cased,
// and the clauses before a question's last that state a preference
// ("我不吃辣，你们有清淡的吗？").
func statements(text string) []string {
	var out []string
	for _, s := range sentenceEnd.FindAllString(strings.ReplaceAll(strings.ToLower(text), "’", "'"), -1) {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !asks(s) {
			out = append(out, s)
			continue
		}
		clauses := clauseEnd.Split(s, -1)
		for _, c := range clauses[:len(clauses)-1] {
			if c = strings.TrimSpace(c); c != "" && !asks(c) && statesPreference([]string{c}) {
				out = append(out, c)
			}
		}
	}
	return out
}

// asks says whether one lower-cased sentence is a question.
func asks(s string) bool {
	if strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") {
		return true
	}
	bare := strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	if zhQuestion.MatchString(bare) {
		return true
	}
	words := strings.FieldsFunc(bare, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == '，' })
	if len(words) == 0 || !questionStarts[words[0]] {
		return false
	}
	// "Do not book red-eye flights" instructs.
	return !(words[0] == "do" && len(words) > 1 && words[1] == "not")
}

// greeting says whether text only greets, thanks or acknowledges.
func greeting(text string) bool {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	for _, w := range words {
		if !greetings[w] {
			return false
		}
	}
	return true
}

// statesPreference says whether one of the statements states a
// preference of its speaker, not a reaction ("I love it!").
func statesPreference(statements []string) bool {
	for _, s := range statements {
		if zhPreference.MatchString(s) {
			return true
		}
		for _, loc := range enPreference.FindAllStringIndex(s, -1) {
			rest := strings.FieldsFunc(s[loc[1]:], func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
			if len(rest) == 0 || !reactionObjects[rest[0]] || len(rest) > 3 {
				return true
			}
		}
	}
	return false
}
