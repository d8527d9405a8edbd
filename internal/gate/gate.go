// Package gate is engram's write gate: four rules, no model, that refuse a
// memory which will not help a later conversation (seed 003's four
// criteria). They read English and Chinese.
//
//   - self_contained: the note does not open with a pronoun whose referent
//     is elsewhere ("She only eats…", "他说…"), and a relative time
//     ("yesterday", "昨天", "next week") comes with an absolute date in the
//     text or its context.
//   - specific: the note is not a bag of keywords: a list of bare terms
//     with no sentence among them, a run of hashtags, or one word repeated.
//   - repeat: the note is not a near-duplicate of a live memory in the same
//     scope (Similarity at least RepeatThreshold; identical text is left to
//     the store's deduplication).
//   - durable: the note is not small talk: greetings, thanks,
//     acknowledgements and the like, with nothing else said.
//
// Check applies the rules in that order (durable first, so "Thanks!" is
// named small talk, not unspecific) and returns the first that fails.
package gate

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram/analysis"
)

// The rules' names, as the 422 error and the benchmark name them.
const (
	SelfContained = "self_contained"
	Specific      = "specific"
	Repeat        = "repeat"
	Durable       = "durable"
)

// Rules lists the rule names in the order Check applies them.
var Rules = []string{Durable, SelfContained, Specific, Repeat}

// RepeatThreshold is the Similarity at or above which a note repeats a
// stored one (tuned on the tuning half; docs/gate.md).
const RepeatThreshold = 0.8

// Verdict is the outcome of Check: Rule is "" when the note passes.
type Verdict struct {
	Rule   string
	Reason string
}

// Note is what the rules read: the text that would be stored and searched,
// and its context (a session date there anchors a relative time).
type Note struct {
	Content string
	Context string
}

// Stored is a live memory that a note may repeat: its text and terms.
type Stored struct {
	Text         string
	terms, chars map[string]bool
}

// NewStored prepares text for the repeat rule.
func NewStored(text string) Stored {
	st := Stored{Text: text, terms: map[string]bool{}, chars: map[string]bool{}}
	for _, t := range analysis.Terms(text) {
		st.terms[t] = true
		if r, _ := utf8.DecodeRuneInString(t); unicode.Is(unicode.Han, r) {
			for _, c := range t {
				st.chars[string(c)] = true
			}
		} else {
			st.chars[t] = true
		}
	}
	return st
}

// Check applies the four rules to n. stored are the live memories in n's
// scope that may repeat it (nil: no repeat check).
func Check(n Note, stored []Stored) Verdict {
	text := strings.TrimSpace(n.Content)
	if v := smallTalk(text); v != "" {
		return Verdict{Durable, v}
	}
	if v := dangling(text, n.Context); v != "" {
		return Verdict{SelfContained, v}
	}
	if v := keywordBag(text); v != "" {
		return Verdict{Specific, v}
	}
	note := NewStored(text)
	for _, s := range stored {
		if s.Text == n.Content {
			continue
		}
		if similarity(note, s) >= RepeatThreshold {
			return Verdict{Repeat, "it repeats a stored memory: " + clip(s.Text, 60)}
		}
	}
	return Verdict{}
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// --- durable: small talk ---

// smallTalkEN are the English phrases that, alone, say nothing to keep.
var smallTalkEN = []string{
	"good morning", "good afternoon", "good evening", "good night", "see you later", "see you", "talk to you later",
	"talk soon", "take care", "you're welcome", "you are welcome", "no problem", "no worries", "got it",
	"sounds good", "sounds great", "makes sense", "thank you so much", "thank you", "thanks a lot", "thanks so much",
	"how are you", "how's it going", "what's up", "nice to meet you", "have a nice day", "have a good day",
	"i see", "all right", "alright", "of course", "for sure", "me too", "same here",
	"hi", "hello", "hey", "hiya", "thanks", "thx", "ty", "ok", "okay", "k", "sure", "great", "cool", "awesome",
	"nice", "lol", "haha", "hahaha", "bye", "goodbye", "cheers", "yes", "no", "yeah", "yep", "yup", "nope",
	"wow", "perfect", "right", "indeed", "agreed", "done", "noted", "understood", "good", "fine", "welcome",
	"morning", "night", "oh", "ah", "hmm", "um", "so", "well", "too", "very", "much", "again", "you", "all",
	"everyone", "there", "guys", "really", "totally", "definitely", "absolutely",
}

// smallTalkZH are the Chinese ones.
var smallTalkZH = []string{
	"早上好", "下午好", "晚上好", "晚安", "你好吗", "您好", "你好", "大家好", "谢谢你", "谢谢您", "谢谢", "多谢", "感谢",
	"不客气", "没关系", "没问题", "不用谢", "好的", "好吧", "好啊", "好呀", "收到", "明白了", "明白", "知道了", "了解",
	"再见", "拜拜", "回头见", "辛苦了", "哈哈", "嗯嗯", "嗯", "哦", "啊", "呀", "吧", "呢", "啦", "是的", "对的", "对",
	"行", "可以", "太好了", "真棒", "厉害", "不错", "好", "早", "在吗", "在的", "你", "大家", "非常", "很", "多",
	"了", "的", "好久不见", "明天见", "改天见", "下次见", "哈", "嘿", "嗨", "哇", "～", "~",
}

var smallTalkWords = regexp.MustCompile(`[\p{L}\p{N}']+`)

// smallTalk reports text made only of greetings, thanks and
// acknowledgements (and a name they address: one capitalised word).
func smallTalk(text string) string {
	rest := text
	for _, p := range smallTalkZH {
		rest = strings.ReplaceAll(rest, p, " ")
	}
	lower := " " + strings.Join(smallTalkWords.FindAllString(strings.ToLower(rest), -1), " ") + " "
	for _, p := range smallTalkEN {
		for strings.Contains(lower, " "+p+" ") {
			lower = strings.Replace(lower, " "+p+" ", " ", 1)
		}
	}
	left := strings.Fields(lower)
	if len(left) == 0 && hasLetter(text) {
		return "it is small talk (a greeting, thanks or acknowledgement)"
	}
	if len(left) == 1 && len(smallTalkWords.FindAllString(text, -1)) > 1 && addressed(text, left[0]) {
		return "it is small talk addressed to someone"
	}
	return ""
}

func hasLetter(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}

// addressed reports that word appears capitalised in text, as a name does.
func addressed(text, word string) bool {
	for _, w := range smallTalkWords.FindAllString(text, -1) {
		if strings.ToLower(w) == word {
			r, _ := utf8.DecodeRuneInString(w)
			return unicode.IsUpper(r)
		}
	}
	return false
}

// --- self_contained: dangling openings and unanchored relative times ---

var (
	danglingEN = regexp.MustCompile(`(?i)^(he|she|it|they|them|him|her|his|its|their|theirs|this|that|these|those)\b('s|'re|'ll|'d)?\s*([\p{L}\p{N}]|$)`)
	danglingZH = regexp.MustCompile(`^(他们|她们|它们|他|她|它|这个|那个|这些|那些|这件事|那件事|此事|该)`)
	relativeEN = regexp.MustCompile(`(?i)\b(yesterday|today|tomorrow|tonight|last night|this (morning|afternoon|evening|week|weekend|month|year)|(last|next) (week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|the other day|a few days ago|\d+ (days|weeks|months|years) ago|(days|weeks|months|years) ago|earlier today|just now|right now)\b`)
	relativeZH = regexp.MustCompile(`(昨天|今天|明天|前天|后天|今晚|昨晚|明晚|今早|上周|下周|本周|这周|上星期|下星期|这星期|上个月|下个月|这个月|本月|去年|明年|今年|前几天|刚才|刚刚|最近|前阵子)`)
	// anchor is an absolute date: 2023-05-08, 8 May 2023, May 8, 2023年, 5月8日.
	anchor = regexp.MustCompile(`(?i)\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}\b|\b\d{1,2} (jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b(19|20)\d{2}\b|\d{4}年|\d{1,2}月\d{1,2}[日号]`)
)

// reaction is an opening sentence that only reacts to what was said
// ("That's great, Caroline!"): it is small talk, and the rule reads the
// note from the sentence after it.
var reaction = regexp.MustCompile(`(?i)^(that|this|it|wow|oh|aw+)('s|’s| is| was| sounds| looks| must be| must have been| seems| feels)?( so| really| very| such| totally| just)?( an?)? ?(great|awesome|amazing|cool|nice|wonderful|fantastic|lovely|good|fun|beautiful|incredible|exciting|impressive|sweet|cute|stunning|inspiring|interesting|terrific|brilliant|hard|tough|sad|rough|true)\b[^.!?]*[.!?]+\s*`)

// dangling reports a note that leans on what is not in it.
func dangling(text, context string) string {
	for {
		m := reaction.FindStringIndex(text)
		if m == nil || m[1] >= len(text) {
			break
		}
		text = text[m[1]:]
	}
	if m := danglingEN.FindStringSubmatch(text); m != nil {
		return "it opens with \"" + m[1] + "\", which points at something the note does not name"
	}
	if m := danglingZH.FindString(text); m != "" {
		return "it opens with \"" + m + "\", which points at something the note does not name"
	}
	rel := relativeEN.FindString(text)
	if rel == "" {
		rel = relativeZH.FindString(text)
	}
	if rel != "" && !anchor.MatchString(text) && !anchor.MatchString(context) {
		return "\"" + rel + "\" has no date to anchor it (put the date in the note or its context)"
	}
	return ""
}

// --- specific: bags of keywords ---

var (
	listSep  = regexp.MustCompile(`[,;|/、，；·\n]+`)
	hashtag  = regexp.MustCompile(`#[\p{L}\p{N}_]+`)
	enWord   = regexp.MustCompile(`[\p{Latin}\p{N}'][\p{Latin}\p{N}'+.#-]*`)
	hanRun   = regexp.MustCompile(`\p{Han}+`)
	sentence = regexp.MustCompile(`[.!?。！？]\s*$`)
)

// function words: a segment holding one is part of a sentence, not a bare
// keyword.
var functionEN = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "were": true, "be": true, "been": true,
	"am": true, "to": true, "of": true, "in": true, "on": true, "at": true, "for": true, "with": true, "by": true,
	"from": true, "and": true, "or": true, "but": true, "not": true, "no": true, "i": true, "we": true, "you": true,
	"he": true, "she": true, "they": true, "it": true, "my": true, "our": true, "your": true, "his": true, "her": true,
	"their": true, "its": true, "has": true, "have": true, "had": true, "do": true, "does": true, "did": true,
	"will": true, "would": true, "can": true, "could": true, "should": true, "must": true, "use": true, "uses": true,
	"used": true, "prefer": true, "prefers": true, "likes": true, "like": true, "wants": true, "want": true,
	"need": true, "needs": true, "always": true, "never": true, "than": true, "that": true, "which": true,
	"who": true, "when": true, "if": true, "as": true, "so": true, "because": true, "into": true, "about": true,
	"after": true, "before": true, "there": true, "this": true, "these": true, "those": true, "me": true,
	"us": true, "them": true, "him": true, "all": true, "any": true, "some": true, "one": true, "only": true,
}

// functionZH are Chinese characters that mark a sentence: particles,
// copulas, pronouns and common verbs.
const functionZH = "的是了在有我你他她它们和与把被要不没让给从到也都就还很说想喜欢爱住叫去做着而但或"

// keywordBag reports a note that lists terms without saying anything of
// them.
func keywordBag(text string) string {
	tags := hashtag.FindAllString(text, -1)
	words := enWord.FindAllString(hashtag.ReplaceAllString(text, " "), -1)
	han := utf8.RuneCountInString(strings.Join(hanRun.FindAllString(hashtag.ReplaceAllString(text, " "), -1), ""))
	if len(tags) >= 3 && len(tags) >= len(words)+han/2 {
		return "it is a run of hashtags"
	}
	terms := analysis.Terms(text)
	if len(terms) >= 6 {
		counts := map[string]int{}
		top := 0
		for _, t := range terms {
			counts[t]++
			top = max(top, counts[t])
		}
		if top >= 3 && len(counts)*2 <= len(terms) {
			return "it repeats the same words over and over"
		}
	}
	segs := nonEmpty(listSep.Split(text, -1))
	if len(segs) < 4 {
		return bareWords(text, words, han)
	}
	bare := 0
	for _, s := range segs {
		if isBare(s) {
			bare++
		}
	}
	if bare*5 >= len(segs)*4 {
		return "it is a list of keywords, not a statement"
	}
	return ""
}

// bareWords reports a note of several words, none a function word, that is
// not a sentence ("python golang rust docker kubernetes").
func bareWords(text string, words []string, han int) string {
	if han > 0 || len(words) < 4 || sentence.MatchString(text) {
		return ""
	}
	for _, w := range words {
		if functionEN[strings.ToLower(w)] || strings.ContainsAny(w, "0123456789") {
			return ""
		}
	}
	return "it is a string of keywords, not a statement"
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// isBare reports a list item of at most three words (or six Chinese
// characters) holding no function word.
func isBare(seg string) bool {
	words := enWord.FindAllString(seg, -1)
	han := hanRun.FindAllString(seg, -1)
	nHan := utf8.RuneCountInString(strings.Join(han, ""))
	if len(words) > 3 || nHan > 6 {
		return false
	}
	for _, w := range words {
		if functionEN[strings.ToLower(w)] {
			return false
		}
	}
	return !strings.ContainsAny(strings.Join(han, ""), functionZH)
}

// --- repeat: near-duplicates ---

// Similarity is the Jaccard overlap of the analysed terms of a and b
// (words stemmed and stop words dropped; Chinese as character bigrams), or
// of their Chinese characters taken one by one when that is higher (so
// "对花生和海鲜过敏" repeats "对海鲜和花生过敏"): 1 for the same terms, 0 for
// none shared.
func Similarity(a, b string) float64 {
	return similarity(NewStored(a), NewStored(b))
}

func similarity(a, b Stored) float64 {
	return max(jaccard(a.terms, b.terms), jaccard(a.chars, b.chars))
}

func jaccard(sa, sb map[string]bool) float64 {
	if len(sa) == 0 || len(sb) == 0 {
		return 0
	}
	inter := 0
	for t := range sa {
		if sb[t] {
			inter++
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// QueryTerms are the terms a store search uses to find the memories that
// may repeat text: its longest distinct terms, at most n. A near-duplicate
// shares most terms, so it holds at least one of them.
func QueryTerms(text string, n int) []string {
	terms := analysis.UniqueTerms(text)
	out := make([]string, 0, n)
	for len(out) < n && len(terms) > 0 {
		best := 0
		for i, t := range terms {
			if utf8.RuneCountInString(t) > utf8.RuneCountInString(terms[best]) {
				best = i
			}
		}
		out = append(out, terms[best])
		terms = append(terms[:best], terms[best+1:]...)
	}
	return out
}
