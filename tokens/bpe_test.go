package tokens

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// testEncodings are the encodings the fast counter must reproduce.
var testEncodings = []string{"cl100k_base", "o200k_base"}

// splitPatterns are the pre-tokenizer patterns of tiktoken-go v0.1.8's
// encoding.go, verbatim, so that pieces can be checked one by one.
var splitPatterns = map[string]string{
	"cl100k_base": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"o200k_base": strings.Join([]string{
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`\p{N}{1,3}`,
		` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
		`\s*[\r\n]+`,
		`\s+(?!\S)`,
		`\s+`,
	}, "|"),
}

// oracle is tiktoken-go and its split pattern for one encoding: the
// reference the fast counter is checked against.
type oracle struct {
	enc     *tiktoken.Tiktoken
	split   *regexp2.Regexp
	counter *fastCounter
}

var (
	oraclesOnce sync.Once
	oracles     map[string]*oracle
	oraclesErr  error
)

// testOracle returns the shared oracle of encoding; building tiktoken-go's
// encoder takes about a second per encoding.
func testOracle(tb testing.TB, encoding string) *oracle {
	tb.Helper()
	oraclesOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		oracles = map[string]*oracle{}
		for _, name := range testEncodings {
			enc, err := tiktoken.GetEncoding(name)
			if err != nil {
				oraclesErr = err
				return
			}
			counter, err := counterFor(name)
			if err != nil {
				oraclesErr = err
				return
			}
			oracles[name] = &oracle{
				enc:     enc,
				split:   regexp2.MustCompile(splitPatterns[name], regexp2.None),
				counter: counter,
			}
		}
	})
	if oraclesErr != nil {
		tb.Fatal(oraclesErr)
	}
	return oracles[encoding]
}

// wantPieces splits text as tiktoken-go does: regexp2 matches over the
// text's runes.
func (o *oracle) wantPieces(text string) []string {
	runes := []rune(text)
	var pieces []string
	m, _ := o.split.FindRunesMatch(runes)
	for m != nil {
		pieces = append(pieces, string(runes[m.Index:m.Index+m.Length]))
		m, _ = o.split.FindNextMatch(m)
	}
	return pieces
}

// gotPieces splits text with the fast counter's scanner.
func (o *oracle) gotPieces(text string) []string {
	if !utf8.ValidString(text) {
		text = string([]rune(text))
	}
	var pieces []string
	for p := 0; p < len(text); {
		end := o.counter.split(text, p)
		pieces = append(pieces, text[p:end])
		p = end
	}
	return pieces
}

// check reports where the fast counter's pieces or count for text differ
// from tiktoken-go's.
func (o *oracle) check(tb testing.TB, encoding, text string) {
	tb.Helper()
	if got, want := o.gotPieces(text), o.wantPieces(text); !slices.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		tb.Errorf("%s pieces of %+q differ at %d:\n got %+q\nwant %+q", encoding, text, i, got[i:], want[i:])
		return
	}
	if got, want := o.counter.count(text), len(o.enc.EncodeOrdinary(text)); got != want {
		tb.Errorf("%s Count(%+q) = %d, tiktoken-go says %d", encoding, text, got, want)
	}
}

// trickyTexts are inputs at the edges of the split patterns.
var trickyTexts = []string{
	"",
	"a",
	"hello world",
	"I'm sure it's what they'd've said, isn't it? We'll see; you're right.",
	"IT'S HE'LL WE'RE THEY'VE I'M I'D DON'T 'S 'LL 'Re 'vE",
	"'s's's 'sa 'll'll ''s x'S y'LLz",
	"o'clock rock'n'roll ’s ’ll",
	"1234567 12 1 0.5 3.14159 1,000,000 -42 +7e10 ٣٤٥٦ ²³ Ⅻ ½",
	"  leading",
	"trailing  ",
	"a  \n\n  b",
	"\r\n",
	"line1\r\nline2\r\n\r\n\tindented\n",
	"\t\tx\t \ty  \t",
	" \n \n x",
	"a\u00a0b\u3000c\u2028d\u0085e\u1680f  \u00a0g",
	"\v\f\x00\x1b\x7f",
	"😀 👍🏽 👨‍👩‍👧‍👦 🇺🇸 ❤️ 🏳️‍🌈 ✌🏿",
	"e\u0301 n\u0303 a\u0300\u0301\u0302 \u0301 \u0301a ि\u0903 \u20dd",
	"नमस्ते दुनिया",
	"我喜欢喝咖啡，下周三去看牙科。",
	"日本語のテキストとカタカナ、ひらがな。",
	"한국어 텍스트입니다. 안녕하세요!",
	"مرحبا بالعالم، كيف حالك؟",
	"שלום עולם",
	"สวัสดีครับ",
	"iPhone15Pro MacBookAir M2Max iOS17 HTTPServer getHTTPResponseCode",
	"ǅungla ǈ ʰello ªb ß İstanbul \u212Aelvin ſ ΣΑΣ σας",
	"𝐀𝐁𝐂 𝒶𝒷 𠀀𠀁 𐐀𐐨 𝟙𝟚𝟛 𝔘𝔫𝔦",
	"https://example.com/path/to/page?q=1&r=two#frag",
	"// comment\nfunc main() {\n\tfmt.Println(\"hi\") // x\n}\n",
	"if (a >= b && c != d) { return x->y; } /* ok */ a//b ///",
	`{"key": "value", "n": [1, 2, 3], "nested": {"ok": true, "s": "it's"}}`,
	"<|endoftext|> <|fim_prefix|><|endofprompt|>",
	"...!!!???---___===***~~~   \"quoted\" 'single'",
	"!!\n\n/ !/ ./\r\n/x",
	"\xff\xfe hello \xe4\xb8 world \xed\xa0\x80 \xc0\xaf \x80",
	"\xff",
	"\uFFFD\uFFFD ok",
	"Mixed 中文 and English 混合 text with 数字123 and emoji 🎉.",
	strings.Repeat("我喜欢喝咖啡", 80),
	strings.Repeat("abcdefghij", 60),
	strings.Repeat(" ", 600) + "x",
	strings.Repeat("=", 700),
	strings.Repeat("\n", 50),
}

// TestCountMatchesTiktoken checks the pieces and counts of trickyTexts.
func TestCountMatchesTiktoken(t *testing.T) {
	for _, encoding := range testEncodings {
		o := testOracle(t, encoding)
		for _, text := range trickyTexts {
			o.check(t, encoding, text)
		}
	}
}

// fragments are the building blocks of random texts, grouped so that
// every group is picked equally often whatever its size.
var fragments = [][]string{
	{"hello", "World", "the", "iPhone", "ABC", "x", "Q", "don", "HTTP", "quick", "fox"},
	{"'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D", "'", "'x", "'r", "'l", "’s"},
	{"0", "1", "12", "123", "1234567", "٣٤٥", "²", "Ⅻ", "½", "𝟙", "३"},
	{" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r", "\v", "\f", "\u00a0", "\u3000", "\u2028", "\u0085", "\u1680", "\u200b"},
	{".", ",", "!!", "/", "//", "...", "-", "—", "«", "»", "{", "}", "\"", "<|endoftext|>", "@", "#", "$", "%", "\\", "`", "(", ")", ":", ";", "?", "*", "_", "=", "+", "|", "~", "^", "&"},
	{"😀", "👍🏽", "👨‍👩‍👧", "🇺🇸", "❤️", "\u200d", "\ufe0f", "🏿", "🎉", "©", "™", "€"},
	{"\u0301", "e\u0301", "ñ", "\u0903", "\u20dd", "ि", "\u064b", "\u0e31"},
	{"我", "喜欢", "咖啡", "日本語", "ひらがな", "カタカナ", "한국어", "，", "。", "、", "「", "」", "ー", "々"},
	{"مرحبا", "שלום", "नमस्ते", "สวัสดี", "Привет", "Ελλάδα"},
	{"ǅ", "ǈ", "ʰ", "ª", "ß", "İ", "\u212A", "ſ", "Σ", "ς", "ᾈ", "ꟹ"},
	{"𝐀", "𝒶", "𠀀", "𐐀", "𐐨", "𝔘", "𞤀", "𞤢"},
	{"\xff", "\xe4\xb8", "\xed\xa0\x80", "\xc0\xaf", "\x80", "\x00", "\x1b", "\x7f", "\uFFFD"},
}

// randomTokenText returns a random mix of fragments, or now and then of
// arbitrary runes and bytes.
func randomTokenText(r *rand.Rand) string {
	var b strings.Builder
	n := r.IntN(40)
	for range n {
		switch k := r.IntN(20); {
		case k == 0:
			b.WriteRune(rune(r.IntN(0x30000)))
		case k == 1:
			b.WriteByte(byte(r.IntN(256)))
		default:
			group := fragments[r.IntN(len(fragments))]
			b.WriteString(group[r.IntN(len(group))])
		}
	}
	return b.String()
}

// TestCountRandomMatchesTiktoken checks 6,000 seeded random mixes of the
// character classes the patterns distinguish.
func TestCountRandomMatchesTiktoken(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, 6000)
	for i := range texts {
		texts[i] = randomTokenText(r)
	}
	for _, encoding := range testEncodings {
		o := testOracle(t, encoding)
		for _, text := range texts {
			o.check(t, encoding, text)
			if t.Failed() {
				return
			}
		}
	}
}

// FuzzCountMatchesTiktoken checks arbitrary strings, seeded with
// trickyTexts; run it with go test -fuzz FuzzCountMatchesTiktoken.
func FuzzCountMatchesTiktoken(f *testing.F) {
	for _, text := range trickyTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, encoding := range testEncodings {
			testOracle(t, encoding).check(t, encoding, text)
		}
	})
}

// quadraticMerge is tiktoken-go's bytePairMerge, counting parts: after
// every join it scans all parts for the leftmost lowest-ranked pair.
func quadraticMerge(ranks *rankTable, piece string) int {
	type part struct{ start, rank int }
	parts := make([]part, len(piece)+1)
	for i := range parts {
		parts[i] = part{i, noRank}
	}
	pairRank := func(i int) int {
		if i+2 < len(parts) {
			return ranks.rank(piece[parts[i].start:parts[i+2].start])
		}
		return noRank
	}
	for i := range parts {
		parts[i].rank = pairRank(i)
	}
	for {
		best, at := noRank, -1
		for i, p := range parts[:len(parts)-1] {
			if p.rank < best {
				best, at = p.rank, i
			}
		}
		if at < 0 {
			return len(parts) - 1
		}
		parts = append(parts[:at+1], parts[at+2:]...)
		parts[at].rank = pairRank(at)
		if at > 0 {
			parts[at-1].rank = pairRank(at - 1)
		}
	}
}

// TestMergeMatchesQuadratic checks the heap merge against tiktoken-go's
// quadratic one on pieces of up to 600 bytes, including runs of one byte
// where several pairs tie for the lowest rank.
func TestMergeMatchesQuadratic(t *testing.T) {
	alphabets := []string{"ab", "abcde ", "我喜欢喝咖啡的", "a", "0123456789", "éèêë", "=-", "\xff\x00"}
	r := rand.New(rand.NewPCG(3, 4))
	for _, encoding := range testEncodings {
		c := testOracle(t, encoding).counter
		for range 2000 {
			alphabet := []rune(alphabets[r.IntN(len(alphabets))])
			var b strings.Builder
			for b.Len() < 2 || b.Len() < 600 && r.IntN(50) > 0 {
				b.WriteRune(alphabet[r.IntN(len(alphabet))])
			}
			piece := b.String()
			if got, want := c.merge(piece), quadraticMerge(c.ranks, piece); got != want {
				t.Fatalf("%s merge(%q) = %d, quadratic merge gives %d", encoding, piece, got, want)
			}
		}
	}
}

// TestRankTable checks the rank of every token, and of near misses that
// are not tokens, against the rank map it was built from.
func TestRankTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, encoding := range testEncodings {
		ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(rankFiles[encoding])
		if err != nil {
			t.Fatal(err)
		}
		table := testOracle(t, encoding).counter.ranks
		check := func(b string) {
			want, ok := ranks[b]
			if !ok {
				want = noRank
			}
			if got := table.rank(b); got != want {
				t.Fatalf("%s rank(%q) = %d, want %d", encoding, b, got, want)
			}
		}
		for b := range ranks {
			check(b)
			check(b + string(rune('a'+r.IntN(26))))
			check(b[:len(b)-1])
			check(b[1:])
		}
		for i := range 1 << 16 {
			check(string([]byte{byte(i), byte(i >> 8)}))
		}
		for range 100000 {
			b := make([]byte, 1+r.IntN(20))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			check(string(b))
		}
	}
}

// TestCountConcurrent counts from several goroutines at once, with more
// distinct multi-token pieces than the cache has slots, so that cache
// stores race with lookups of the same slots.
func TestCountConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	zh := []rune("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经")
	texts := make([]string, 4000)
	for i := range texts {
		var b strings.Builder
		for range 5 {
			for range 2 + r.IntN(8) {
				b.WriteRune(zh[r.IntN(len(zh))])
			}
			b.WriteString("，")
		}
		texts[i] = b.String()
	}
	for _, encoding := range testEncodings {
		o := testOracle(t, encoding)
		want := make([]int, len(texts))
		for i, text := range texts {
			want[i] = len(o.enc.EncodeOrdinary(text))
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for k := range 2 * len(texts) {
					i := (k*7 + g*len(texts)/4) % len(texts)
					if got := o.counter.count(texts[i]); got != want[i] {
						t.Errorf("%s count(%q) = %d, want %d", encoding, texts[i], got, want[i])
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestRuneClasses checks the class of every rune against the predicates
// regexp2 evaluates: unicode.IsSpace for \s and the unicode package's
// category tables for \p{…}.
func TestRuneClasses(t *testing.T) {
	in := func(r rune, cats ...string) bool {
		for _, cat := range cats {
			if unicode.Is(unicode.Categories[cat], r) {
				return true
			}
		}
		return false
	}
	var buf [utf8.UTFMax]byte
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		var want runeClass
		if in(r, "L") {
			want |= classLetter
		}
		if in(r, "N") {
			want |= classNumber
		}
		if unicode.IsSpace(r) {
			want |= classSpace
		}
		if r == '\r' || r == '\n' {
			want |= classNewline
		}
		if in(r, "Lu", "Lt", "Lm", "Lo", "M") {
			want |= classUpper
		}
		if in(r, "Ll", "Lm", "Lo", "M") {
			want |= classLower
		}
		n := utf8.EncodeRune(buf[:], r)
		if got, size := classAt(string(buf[:n]), 0); got != want || size != n {
			t.Fatalf("classAt(%U) = %06b, %d; want %06b, %d", r, got, size, want, n)
		}
	}
}

// TestContractionFolding backs scanContraction's ASCII case folding: the
// only runes regexp2's IgnoreCase matches to a contraction letter are the
// letter and its ASCII capital.
func TestContractionFolding(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		l := unicode.ToLower(r)
		if strings.ContainsRune("strevmld", l) && r != l && r != l-'a'+'A' {
			t.Errorf("%U lower-cases to %q", r, l)
		}
	}
}

// benchText returns a mixed Chinese and English memory context of about
// 2,000 tokens, generated from seed. Its clauses are random word
// sequences, so that few pieces repeat within or across texts.
func benchText(seed uint64) string {
	en := strings.Fields(`prefers concise answers without emoji the user's dentist appointment
		is next Wednesday deploys go through staging first never push to prod on Fridays likes
		oat-milk lattes no sugar from the café project Atlas uses PostgreSQL and Go CI runs on
		GitHub Actions they'd rather get a summary first details only when asked backup contact`)
	zh := strings.Fields(`我 喜欢 喝 咖啡 下周三 去 看 牙科 用户 偏好 简短 的 回答 不要 使用 表情 符号
		项目 数据库 部署 前 需要 先 在 测试 环境 验证 每周五 下午 发布 新 版本 以免 周末 出现 故障
		无人 处理 他 女儿 今年 九岁 画画 弹 钢琴 会议 记录 二十四 小时 内 整理 完毕 并 发送 给 所有 参会 人员`)
	r := rand.New(rand.NewPCG(5, seed))
	words := func(b *strings.Builder, vocab []string, n int, sep string) {
		for i := range n {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(vocab[r.IntN(len(vocab))])
		}
	}
	var b strings.Builder
	b.WriteString("[Agent Memory]\n")
	for b.Len() < 6300 {
		fmt.Fprintf(&b, "- /user/mem/%d ", r.IntN(100000))
		words(&b, en, 4+r.IntN(8), " ")
		b.WriteString(". ")
		words(&b, zh, 3+r.IntN(6), "")
		b.WriteString("，")
		words(&b, zh, 2+r.IntN(5), "")
		fmt.Fprintf(&b, "。(%d/%02d)\n", 2020+r.IntN(7), 1+r.IntN(12))
	}
	return b.String()
}

// BenchmarkCount measures a Tokenizer recounting a context (warm: its
// multi-token pieces come from the cache, as when a context is counted
// after its lines were) and counting ever new contexts (cold: 512
// different texts in turn, whose pieces overflow the cache).
func BenchmarkCount(b *testing.B) {
	cold := make([]string, 512)
	for i := range cold {
		cold[i] = benchText(uint64(i) + 1)
	}
	for _, encoding := range testEncodings {
		tok, err := New(encoding)
		if err != nil {
			b.Fatal(err)
		}
		text := benchText(0)
		tokens := tok.Count(text)
		b.Run(encoding+"/warm", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Count(text)
			}
			reportPerToken(b, tokens)
		})
		b.Run(encoding+"/cold", func(b *testing.B) {
			size, tokens := 0, 0
			for _, text := range cold {
				size += len(text)
				tokens += tok.Count(text)
			}
			b.SetBytes(int64(size / len(cold)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				tok.Count(cold[i%len(cold)])
				i++
			}
			reportPerToken(b, tokens/len(cold))
		})
	}
}

// BenchmarkCountTiktokenGo measures tiktoken-go on BenchmarkCount's texts.
func BenchmarkCountTiktokenGo(b *testing.B) {
	cold := make([]string, 512)
	for i := range cold {
		cold[i] = benchText(uint64(i) + 1)
	}
	for _, encoding := range testEncodings {
		enc := testOracle(b, encoding).enc
		text := benchText(0)
		b.Run(encoding+"/warm", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				enc.EncodeOrdinary(text)
			}
			reportPerToken(b, len(enc.EncodeOrdinary(text)))
		})
		b.Run(encoding+"/cold", func(b *testing.B) {
			size, tokens := 0, 0
			for _, text := range cold {
				size += len(text)
				tokens += len(enc.EncodeOrdinary(text))
			}
			b.SetBytes(int64(size / len(cold)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				enc.EncodeOrdinary(cold[i%len(cold)])
				i++
			}
			reportPerToken(b, tokens/len(cold))
		})
	}
}

// reportPerToken adds the texts' mean token count and the time per token
// to b's results.
func reportPerToken(b *testing.B, tokens int) {
	b.ReportMetric(float64(tokens), "tokens")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tokens), "ns/token")
}
