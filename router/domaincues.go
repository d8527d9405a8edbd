package router

import "github.com/engram-memory/engram"

// domainCueRules add domain evidence that the term lexicon cannot see,
// matched like the intent cues against the normalised query:
//
//   - English phrases made of stop words, which analysis drops: the how-to
//     forms of a strategy question ("how do I", "what works"), the phrasing
//     of a taste ("do I like", "my go-to"), and the idioms of a feeling
//     ("weighing on me", "on edge"); a trailing "*" matches a word's
//     inflections ("overthink*" finds "overthinking").
//   - Chinese morphemes of one character (猫, 烦, 慌), which analysis
//     splits into bigrams with whatever character stands next to them, so
//     that no lexicon entry can match them; only characters that rarely
//     mean anything else inside a longer word are listed.
//
// A cue weighs less than a topic keyword: a query that names its topic
// ("how do I get to the dentist") keeps it, and a cue decides only where
// the query names none.
var domainCueRules = []rule[string]{
	{engram.CategoryStrategy, join(
		cues(cueWeight, `how_do_i how_can_i how_did_i how_to how_do_you ways_to way_to tips tip_for trick_for
			my_system the_system system_for stick_to stick_with keep_up_with stay_on_top keep_track get_better_at
			get_more_done get_things_done what_works what_worked works_for_me worked_for_me productiv* procrastinat*
			organiz* organis* routine* habit* method* techniqu* approach* strateg* efficien* motivat* discipline*
			consisten* streak* schedul* stop_* quit_*
			怎么才能 怎样才能 如何才能 怎么把 有什么办法 做法 管用 有用 套路 省时间 小技巧 日程 安排 早起 单词 读书
			坚持 戒掉 改掉 减脂 怎么做到 做到 保持 提醒自己 笔记 日记 打卡 节奏 精力 碎片时间 省钱 开销 花钱 英语 口语 练`),
		cues(cueWeight, `managing manage handle handling deal_with dealing_with juggl* balanc* prevent* avoid*
			reduce* cut_down get_rid stay_focused on_time save_time time_for the_way_i my_way_of workaround*
			rule_for rules_for my_rules what_i_do_to stay_on_track on_track keep_going get_started`),
	)},
	{engram.CategoryEmotion, join(
		cues(aspectWeight, `feel* emotion* mood* overthink* ruminat* worr* stress* anxi* panic* nervous* on_edge
			weighing_on weigh_on bother* upset* sad* lonel* irritat* annoy* frustrat* resent* jealous* insecur*
			guilt* ashamed embarrass* regret* griev* heartbr* cried crying tears calm* happy happier happiest happiness joy* cheer* excit*
			proud grateful hopeless* vent venting coping cope get_over got_over moved_on move_on therap* mental_health
			breakdown meltdown emotional* scared fear* afraid dread* numb bored boredom restless* fed_up
			tired_of sick_of gets_to_me got_to_me low_point rough_patch down_lately feeling_down eating_at
			short_with snapped spirits morale nerves tension so_low feeling_low been_low down_about bad_day
			rough_day bad_mood good_mood worked_up set_me_off sets_me_off getting_me_down gets_me_down funk
			rattled shaken tear_up teared_up teary tearful choked_up lifts_me drains_me irritab* gloomy moody cranky
			grumpy touchy vulnerable thrilled elated at_peace appreciated valued ignored left_out rejected betrayed
			let_down disappoint* hopeful optimis* pessimis*
			心里 心情 感受 什么感觉 烦 丧 慌 哭 愁 闷 怕 委屈 低谷 撑过 熬过 挺过 胡思乱想 想太多 排解 放松 崩溃
			情绪 难受 开心 快乐 累了 很累 好累 太累 心累 受打击 不安 发火 脾气 冷战 孤单 没劲 提不起 踏实 安心
			满足 成就感 感恩 骄傲 自豪 丢脸 没面子 心动 怒 恼 忧 惧 愧 悔 羞 郁`),
		cues(cueWeight, `感觉 批评 被骂`),
	)},
	{engram.CategoryPreference, join(
		cues(aspectWeight, `do_i_like do_i_prefer i_like i_prefer i_love i_hate do_i_enjoy i_enjoy my_favorite
			my_favourite my_go_to cant_stand can_not_stand into_lately taste* flavo* prefer* favo*
			喜欢 爱吃 爱喝 口味 偏好 在意 讲究 要求 类型 锅底 火锅 烧烤 日料 寿司 川菜 粤菜 早餐 零食`),
		cues(cueWeight, `my_usual do_i_order go_for i_order kind_of_* sort_of_*
			耳机 手机 电脑 相机 一款 款式 点什么 点菜 平时 do_i_take do_i_eat do_i_drink do_i_wear do_i_watch
			listen* ideal dream_* must_have dealbreaker* pet_peeve*`),
	)},
	{engram.CategoryLife, join(
		cues(cueWeight, `where_did_we where_do_we where_did_i_put in_laws dinner lunch brunch gift* picnic zoo
			museum park church temple symptom* ache headache migraine cough injur* sprain diagnos* specialist
			dermatologist optometrist nap diaper stroller 学费 补习 辅导班 作业 车位 保姆 月嫂 医保 咳 鼻炎`),
		cues(aspectWeight, `猫 狗 娃 孩 妈 爸 婚 孕 邻 租 搬 病 药 医 牙 宠 奶奶 爷爷 姥姥 外婆 舅 姑 姨`),
		cues(cueWeight, `车 玩 海边 山里 暑假 寒假 住院 看望 探望 机油 班主任 家长会 买菜 做饭 吃饭`),
	)},
	{engram.CategoryWork, join(
		cues(cueWeight, `客户 领导 甲方 乙方 用户 上线 需求 版本 外派 续约 规划会 发布说明 方案 跟进 推进 审批 系统
			接口 数据 运营 市场 销售 合作 会上 述职 答辩 转岗 调岗 组里 老大 ppt`),
	)},
}

// cueWeight is the weight of a domain cue that hints at a domain without
// naming a topic: as much as a topic keyword, so a tie with one goes to
// the earlier domain in configured order.
const cueWeight = topicWeight

// domainCueTable is domainCueRules compiled.
var domainCueTable = compileTable(domainCueRules)

// cueEvidence raises each domain's evidence to the weight of the domain
// cues found in the normalised text when that is more. The larger of the
// two counts, not their sum: many cues restate a lexicon entry in another
// form ("anxi*" and "anxious", 猫 and 养猫), and one word must not count
// twice.
func cueEvidence(text string, evidence map[string]float64) {
	for _, r := range domainCueTable {
		evidence[r.label] = max(evidence[r.label], score(text, r.cues))
	}
}
