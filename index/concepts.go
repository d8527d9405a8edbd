package index

import (
	"slices"
	"strings"
	"unicode"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// A concept lexicon: general categories and the words that name their
// members, in English and Chinese. A question asks by category ("What
// activities does Melanie partake in?", "她有什么爱好？") while the memory
// that answers names a member ("I went swimming", "我周末去游泳"), and no
// word of one is in the other; so a query that holds a category word also
// searches for the category's members, at conceptWeight (see
// conceptTerms). It is general knowledge written from the categories, the
// way a thesaurus lists hyponyms, not from any benchmark's answers; the
// line of doing verbs (went, joined, attended, …) stands for what a
// question about someone's activities or events asks: things they did.
//
// Each line is "category words: members", comma-separated. A category
// word is matched as the index term it makes (so "activity" and
// "activities" are one, and a Chinese category is a two-character word);
// a member may be a phrase, each of whose terms is searched. Chinese
// members have two characters or more, since the index holds bigrams (小提琴
// → 小提, 提琴): a lone character is not a term of a longer run.
const conceptLexicon = `
activity, activities, hobby, hobbies, pastime, pastimes, leisure, fun, interests: swimming, hiking, camping, running, jogging, cycling, biking, painting, drawing, pottery, ceramics, knitting, sewing, crochet, cooking, baking, gardening, fishing, reading, writing, dancing, singing, yoga, meditation, photography, skiing, snowboarding, surfing, climbing, kayaking, canoeing, skating, volunteering, traveling, gaming, sculpting, woodworking, crafts, museum, concert, picnic, beach, puzzles, chess
outdoor, outdoors: hiking, camping, fishing, kayaking, canoeing, climbing, cycling, biking, skiing, surfing, picnic, beach, trail, park, mountains, lake, garden, campfire
sport, sports, athletic, exercise, exercises, workout, workouts, fitness: basketball, football, soccer, tennis, baseball, volleyball, golf, hockey, swimming, running, boxing, rugby, cricket, badminton, cycling, skiing, surfing, wrestling, gym, weightlifting, yoga, pilates, marathon, karate, jogging
martial: karate, taekwondo, judo, kung fu, jiu jitsu, kickboxing, boxing, aikido, muay thai, wrestling, mma
art, arts, artwork, craft, crafts, creative: painting, drawing, sketching, pottery, ceramics, sculpture, photography, knitting, sewing, calligraphy, mural, canvas, watercolor, clay
music, musical, instrument, instruments: guitar, piano, violin, drums, flute, clarinet, saxophone, cello, ukulele, trumpet, harp, keyboard, bass, banjo, band, song, album, singer, concert
concert, concerts, gig, gigs, band, bands, artists, musicians: concert, festival, band, singer, tour, live music, show, gig
book, books, novel, novels, reading, literature, author, authors: novel, book, author, read, reading, series, fiction, memoir, biography, poetry, chapter, library
film, films, movie, movies, cinema, tv, show, shows, series: movie, film, cinema, theater, watched, documentary, series, episode, season, trailer, netflix
game, games, gaming: board game, video game, chess, cards, puzzle, console, tournament, multiplayer, strategy, playing
pet, pets, animal, animals: dog, dogs, puppy, cat, cats, kitten, turtle, turtles, fish, hamster, rabbit, bunny, bird, parrot, horse, guinea pig, snake, lizard
family, families, relatives, kids, children, child: kids, children, son, daughter, husband, wife, mom, mother, dad, father, parents, brother, sister, grandma, grandmother, grandpa, grandfather, aunt, uncle, cousin, baby
relationship, relationships, romantic, dating, marital: single, married, marriage, divorced, divorce, engaged, engagement, dating, boyfriend, girlfriend, partner, husband, wife, breakup, widowed, wedding, single parent
food, foods, meal, meals, dish, dishes, cuisine, recipe, recipes, cook, cooked, cooking: pasta, pizza, soup, salad, curry, stew, sandwich, burger, tacos, sushi, noodles, rice, bread, chicken, steak, seafood, vegetables, casserole, roast, pie, baked, recipe
dessert, desserts, sweets, treats, baked, baking: cake, cookies, pie, ice cream, brownies, cupcakes, pastry, pudding, chocolate, tart, muffins, cheesecake, pancakes, donuts, candy, cobbler
drink, drinks, beverage, beverages: coffee, tea, juice, wine, beer, smoothie, cocktail, soda, latte
place, places, location, locations, travel, travels, traveled, trip, trips, visit, visited, vacation, vacationed, destinations: city, country, beach, mountains, park, lake, island, museum, abroad, flight, road trip, hotel, village, town
country, countries, abroad, international: france, italy, spain, germany, england, ireland, scotland, greece, portugal, netherlands, sweden, norway, japan, china, korea, india, thailand, vietnam, mexico, canada, brazil, argentina, peru, australia, egypt, morocco, turkey, switzerland, austria, iceland
city, cities, town, towns: paris, london, rome, tokyo, berlin, madrid, barcelona, amsterdam, prague, vienna, new york, chicago, boston, seattle, miami, los angeles, san francisco, las vegas, philadelphia, detroit, atlanta, denver, toronto, vancouver, sydney, dublin
state, states: california, texas, florida, new york, oregon, washington, colorado, arizona, nevada, utah, hawaii, alaska, michigan, ohio, illinois, georgia, virginia, carolina, tennessee, massachusetts, maine, vermont, montana, wyoming, minnesota
job, jobs, career, careers, work, profession, occupation, employment: job, career, work, office, boss, colleague, promotion, interview, hired, company, business, teacher, nurse, doctor, engineer, counselor, lawyer, designer, manager, startup, internship
volunteer, volunteering, charity, causes, cause, community: volunteer, volunteering, shelter, charity, fundraiser, donation, donate, nonprofit, food bank, community, homeless
event, events: party, festival, concert, parade, conference, workshop, fundraiser, marathon, race, ceremony, meetup, rally, gala, fair, exhibition, competition, tournament, wedding, birthday, celebration
feel, feeling, feelings, emotion, emotions, mood, felt: happy, sad, excited, anxious, nervous, proud, grateful, thankful, angry, frustrated, stressed, worried, scared, lonely, hopeful, relieved, overwhelmed, upset, joy
destress, relax, relaxing, unwind, stress, cope, coping, escape: yoga, meditation, running, walk, hiking, reading, music, painting, bath, nature, journaling, breathing, gardening
study, studies, education, school, schools, class, classes, course, courses, degree: school, college, university, class, course, degree, graduate, exam, lecture, studying, major, workshop
health, injury, injuries, illness, medical: injury, injured, surgery, doctor, hospital, sprained, broken, sick, recovery, therapy, allergy, allergic
activities, activity, hobbies, events, things, done, ways, participated, partake: went, tried, joined, attended, took, started, signed up, volunteered, visited, played, made, finished, learned
clothes, clothing, outfit, outfits, fashion, wear, wardrobe: shirt, dress, jacket, shoes, sneakers, hoodie, jeans, boots, hat, scarf, sweater, coat, skirt, suit, socks, necklace
vehicle, vehicles, car, cars: car, truck, motorcycle, van, suv, scooter, bike, jeep, sedan
holiday, holidays, celebration, celebrations, tradition, traditions, occasions: christmas, thanksgiving, halloween, easter, birthday, new year, hanukkah, diwali, fourth of july, anniversary, wedding
nature, plant, plants, flower, flowers: flowers, roses, sunflowers, tulips, daisies, trees, garden, forest, ocean, mountains, sunset, lake, river
weather, disaster, disasters: rain, snow, storm, sunny, heatwave, flood, hurricane, tornado, earthquake, wildfire
technology, gadget, gadgets, device, devices, electronics: phone, laptop, computer, tablet, camera, headphones, console, app, software, smartwatch
subject, subjects, field, fields: math, science, history, biology, chemistry, physics, literature, psychology, economics, engineering, philosophy
language, languages: english, spanish, french, german, chinese, japanese, italian, korean, portuguese, arabic, russian
faith, religion, religious, spiritual, beliefs: church, prayer, pray, god, bible, mosque, temple, faith, spiritual, worship
friend, friends, people, social: friends, neighbor, neighbors, colleague, colleagues, mentor, classmates, teammates, roommate, buddy
gift, gifts, present, presents, items, possessions, belongings, collection, collect, collectibles, souvenirs: necklace, bracelet, ring, watch, jersey, figurine, doll, poster, photo, souvenir, card, mug, trophy, signed
achievement, achievements, award, awards, accomplishments, success, successes: award, trophy, medal, prize, championship, promotion, scholarship, certificate, won, record
shop, shops, store, stores, business, businesses, venue, venues: store, shop, cafe, restaurant, bakery, studio, boutique, market, mall
活动, 爱好, 兴趣, 消遣, 休闲, 娱乐: 游泳, 徒步, 露营, 跑步, 骑车, 画画, 绘画, 陶艺, 编织, 做饭, 烘焙, 园艺, 钓鱼, 阅读, 看书, 写作, 跳舞, 唱歌, 瑜伽, 冥想, 摄影, 滑雪, 冲浪, 爬山, 登山, 旅行, 旅游, 下棋, 打球
户外: 徒步, 露营, 钓鱼, 爬山, 登山, 骑车, 滑雪, 冲浪, 野餐, 海边, 公园
运动, 锻炼, 健身, 体育: 篮球, 足球, 网球, 排球, 棒球, 羽毛球, 乒乓球, 高尔夫, 游泳, 跑步, 拳击, 滑雪, 健身房, 瑜伽, 马拉松, 骑车
武术: 空手道, 跆拳道, 柔道, 功夫, 太极, 拳击, 散打
艺术, 手工, 创作: 画画, 绘画, 素描, 陶艺, 雕塑, 摄影, 编织, 书法, 油画, 水彩
音乐, 乐器: 吉他, 钢琴, 小提琴, 鼓手, 架子鼓, 长笛, 萨克斯, 大提琴, 尤克里里, 小号, 古筝, 二胡, 乐队, 唱歌, 演唱会
书籍, 读书, 小说, 作者, 阅读: 小说, 作者, 看书, 读完, 传记, 诗歌, 图书馆
电影, 影视, 电视, 剧集: 电影, 影院, 看了, 纪录片, 电视剧, 美剧
游戏: 桌游, 电子游戏, 下棋, 象棋, 围棋, 扑克, 手游, 比赛
宠物, 动物: 小狗, 狗狗, 猫咪, 小猫, 乌龟, 金鱼, 兔子, 仓鼠, 鹦鹉, 小鸟
家人, 家庭, 家里, 孩子, 亲人: 孩子, 儿子, 女儿, 丈夫, 老公, 妻子, 老婆, 妈妈, 母亲, 爸爸, 父亲, 父母, 哥哥, 姐姐, 弟弟, 妹妹, 奶奶, 爷爷, 外婆, 宝宝
感情, 恋爱, 婚姻, 情感: 单身, 结婚, 离婚, 订婚, 男朋友, 女朋友, 男友, 女友, 约会, 分手, 对象, 婚礼, 单亲
食物, 美食, 菜谱, 食谱, 做饭, 饭菜: 面条, 米饭, 饺子, 包子, 火锅, 披萨, 汤面, 沙拉, 寿司, 炒菜, 烤肉, 面包, 海鲜, 蔬菜
甜点, 甜品, 点心: 蛋糕, 饼干, 冰淇淋, 布丁, 巧克力, 甜甜圈, 月饼
饮料, 饮品: 咖啡, 奶茶, 果汁, 啤酒, 红酒, 可乐
地方, 去过, 旅行, 旅游, 度假: 城市, 国家, 海边, 公园, 山上, 岛上, 博物馆, 出国, 酒店
工作, 职业, 事业: 上班, 公司, 老板, 同事, 升职, 面试, 老师, 医生, 护士, 工程师, 律师, 设计师, 经理, 创业, 实习
志愿, 公益, 慈善: 志愿者, 义工, 捐款, 捐赠, 收容所, 慈善, 社区
感受, 心情, 情绪: 开心, 高兴, 难过, 伤心, 兴奋, 焦虑, 紧张, 骄傲, 感激, 生气, 沮丧, 压力, 担心, 害怕, 孤独
衣服, 服装, 穿搭, 时尚: 衬衫, 裙子, 外套, 鞋子, 帽子, 毛衣, 牛仔裤, 卫衣, 围巾, 项链
节日, 庆祝, 传统: 春节, 中秋, 圣诞, 生日, 端午, 元宵, 国庆, 新年, 纪念日, 婚礼
植物, 花草, 鲜花, 自然, 大自然: 玫瑰, 向日葵, 郁金香, 树木, 花园, 森林, 大海, 山上, 日落, 湖边
天气, 灾害: 下雨, 下雪, 台风, 暴雨, 洪水, 地震, 高温
数码, 电子, 设备: 手机, 电脑, 平板, 相机, 耳机, 游戏机, 手表
信仰, 宗教: 教堂, 祈祷, 寺庙, 圣经, 礼拜
朋友, 社交: 同学, 同事, 邻居, 室友, 导师, 队友
礼物, 收藏, 物品, 东西: 项链, 手链, 戒指, 手表, 球衣, 玩偶, 海报, 照片, 纪念品, 奖杯
成就, 奖项, 荣誉: 奖杯, 奖牌, 冠军, 奖金, 升职, 奖学金, 证书, 获奖
`

// conceptWeight is the weight of a member's term relative to a query
// term's. Chosen on LoCoMo's tuning split only, among 0.15, 0.3, 0.5 and
// 0.8 (docs/links.md).
const conceptWeight = 0.3

// concepts maps the index term of each category word to its members'
// terms, sorted and distinct.
var concepts = func() map[string][]string {
	out := map[string][]string{}
	for line := range strings.Lines(conceptLexicon) {
		keys, members, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var terms []string
		for m := range strings.SplitSeq(members, ",") {
			terms = append(terms, analysis.Terms(m)...)
		}
		for k := range strings.SplitSeq(keys, ",") {
			for _, kt := range analysis.Terms(k) {
				out[kt] = append(out[kt], terms...)
			}
		}
	}
	for k, terms := range out {
		slices.Sort(terms)
		out[k] = slices.Compact(terms)
	}
	return out
}()

// notListing are the question words after which a category word does not
// ask for its members: "How did she feel about her family?", "When did he
// reach a career high?" ask for a manner, a time or a reason, and the
// members of "family" or "career" only crowd out the answer. Measured on
// LoCoMo's tuning split (docs/links.md); the Chinese entries are their
// counterparts (什么时候, 为什么, 怎么, 何时, 多久).
var (
	notListing   = map[string]bool{"how": true, "when": true, "why": true}
	notListingZH = []string{"什么时候", "为什么", "怎么", "何时", "多久"}
)

// conceptMember is a member term to search and the category word of the
// query it was reached from.
type conceptMember struct {
	term, category string
}

// conceptTerms returns the members of the categories the query names, by
// term (each once, with the first category that reached it), less the
// query's own terms; none for a question that opens with how, when or
// why, or holds their Chinese counterparts (see notListing).
func conceptTerms(text string, query map[string]bool) []conceptMember {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 || notListing[words[0]] || slices.ContainsFunc(notListingZH, func(w string) bool { return strings.Contains(text, w) }) {
		return nil
	}
	var out []conceptMember
	seen := map[string]bool{}
	for _, w := range words {
		for _, t := range analysis.Terms(w) {
			category := w
			if cjkTerm(t) {
				category = t
			}
			for _, m := range concepts[t] {
				if !query[m] && !seen[m] {
					seen[m] = true
					out = append(out, conceptMember{m, category})
				}
			}
		}
	}
	return out
}

// expandConcepts adds the members of the categories the query names to
// the scores, at conceptWeight, and returns them.
func (t *tenant) expandConcepts(s *scratch, text string, query map[string]bool, user string) []conceptMember {
	members := conceptTerms(text, query)
	for _, m := range members {
		if w, p, ok := t.termIDF(m.term); ok {
			t.accumulate(s, p, w, conceptWeight, false, user)
		}
	}
	return members
}

// concept returns the member that adds most to doc d's score, with its
// category, or nil when d holds none of members.
func (t *tenant) concept(d uint32, members []conceptMember) *engram.Concept {
	var best *engram.Concept
	top := 0.0
	for _, m := range members {
		w, p, ok := t.termIDF(m.term)
		if !ok {
			continue
		}
		if i, ok := slices.BinarySearch(p.docs, d); ok {
			if v := w * t.bm25(p, i, d); v > top {
				top, best = v, &engram.Concept{Category: m.category, Term: m.term}
			}
		}
	}
	return best
}
