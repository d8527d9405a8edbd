package router

import (
	"strings"

	"github.com/engram-memory/engram"
)

// domainCueRules add domain evidence that the term lexicon cannot see,
// matched like the intent cues against the normalised query:
//
// - English phrases made of stop words, which analysis drops: the how-to
// forms of a strategy question ("how do I", "what works"), the phrasing
// of a taste ("do I like", "my go-to"), and the idioms of a feeling
// ("weighing on me", "on edge"); a trailing "*" matches a word's
// inflections ("overthink*" finds "overthinking").
// - Chinese morphemes of one character (猫, 烦, 慌), which analysis
// splits into bigrams with whatever character stands next to them, so
// that no lexicon entry can match them; only characters that rarely
// mean anything else inside a longer word are listed.
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
			consisten* streak* schedul* stop_* quit_* to_do_list* todo_list*
			怎么才能 怎样才能 如何才能 怎么把 有什么办法 做法 有用 小技巧 日程 单词 读书
			坚持 戒掉 改掉 减脂 怎么做到 做到 保持 提醒自己 笔记 日记 打卡 节奏 精力 碎片时间 省钱 开销 花钱 英语 口语 练`),
		cues(cueWeight, `managing manage handle handling deal_with dealing_with juggl* balanc* prevent* avoid*
			reduce* cut_down get_rid stay_focused on_time save_time time_for the_way_i my_way_of workaround*
			rule_for rules_for my_rules what_i_do_to stay_on_track on_track keep_going get_started helps_me helped_me
			to_stay keep_my what_do_i_do_when ritual* setup tool* cheat_sheet game_plan recipe_for formula secret_to
			key_to trick_to batch* 好用 记忆 法 搞定 应对 处理 管理 分配 平衡 作息 早睡 待办 备忘 做事`),
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
			rattled shaken tear_up teared_up teary tearful choked_up lifts_me drains_me gloomy moody cranky
			grumpy touchy vulnerable thrilled elated at_peace appreciated valued ignored left_out rejected betrayed
			let_down disappoint* hopeful optimis* pessimis*
			 心情 感受 什么感觉 烦 丧 慌 哭 愁 闷 怕 委屈 低谷 撑过 熬过 挺过 胡思乱想 想太多 排解 放松 崩溃
			情绪 难受 开心 快乐 累了 很累 好累 太累 心累 受打击 不安 发火 脾气 冷战 孤单 没劲 提不起 踏实 安心
			满足 成就感 感恩 骄傲 自豪 丢脸 没面子 心动 怒 恼 忧 惧 愧 悔 羞 郁 敏感 玻璃心 脆弱 释怀 放下 看开 想开
			执念 在乎 介意 被忽视 冷落 排挤 烦心 闹心 心里话 发泄 宣泄 心结 阴影 创伤 治愈 疗愈 暖心 扎心 破防 社恐
			doubt* second_guess* under_pressure burned_out burnt_out burn_out shaky obsess* envious envy sorrow misery
			gratitude thankful fulfilled fulfillment fulfilment upbeat cheerful uneasy unease 气了 气得 气死 气坏 怄气 躁
			振作 ups_and_downs low_patch low_spell dark_place`),
		cues(cueWeight, `感觉 批评 被骂 吵`),
	)},
	{engram.CategoryPreference, join(
		cues(aspectWeight, `do_i_like do_i_prefer i_like i_prefer i_love i_hate do_i_enjoy i_enjoy my_favorite
			my_favourite my_go_to do_i_avoid i_avoid not_a_fan cant_stand can_not_stand into_lately taste* flavo* prefer* favo*
			喜欢 爱吃 爱喝 口味 偏好 在意 讲究 要求 类型 火锅 烧烤 日料 寿司 川菜 粤菜 早餐 零食`),
		cues(cueWeight, `do_i_order i_order kind_of_* sort_of_*
			耳机 手机 电脑 相机 款式 点菜 平时 do_i_take do_i_eat do_i_drink do_i_wear do_i_watch
			馆子 饭馆 饭店 小吃 美食 舒服 listen* ideal dream_* must_have dealbreaker* pet_peeve*`),
	)},
	{engram.CategoryLife, join(
		cues(cueWeight, `where_do_we where_did_i_put in_laws dinner lunch brunch gift* picnic zoo
			museum park church temple symptom* ache headache migraine cough injur* sprain diagnos* specialist
			dermatologist optometrist nap diaper stroller 学费 补习 辅导班 作业 车位 保姆 月嫂 医保 咳 鼻炎`),
		cues(cueWeight, `猫 狗 娃 孩 妈 爸 婚 孕 邻 租 搬 病 药 医 牙 宠 奶奶 爷爷 姥姥 外婆 舅 姑 姨
			生活 日常 社区 理发 冰箱 洗衣机 空调 热水器 马桶 漏水 停电 水管 门锁 钥匙 违章 罚单 年检 驾校 学车 药店
			公积金 户口 身份证 证件 婆家 娘家 公婆 表哥 表姐 表弟 表妹 侄子 外甥 孙子 闺蜜 发小 同学 室友 相亲 约会
			车 玩 暑假 寒假 住院 看望 探望 家长会 买菜 做饭 吃饭`),
	)},
	{engram.CategoryWork, join(
		// "Work" as a verb ("what worked", "works for me", "working out")
		// stems to the work topic; the phrase takes its weight back.
		cues(-topicWeight, `what_worked whats_worked what_works has_worked hasnt_worked have_worked havent_worked didnt_work
			doesnt_work dont_work worked_for works_for worked_out working_out work_out worked_best works_best
			worked_better works_better actually_worked`),
		cues(cueWeight, `客户 领导 甲方 乙方 用户 上线 需求 版本 方案 跟进 推进 审批 系统
			接口 数据 运营 市场 销售 合作 会上 述职 转岗 调岗 组里 老大 ppt`),
	)},
}

// aspectForms are the grammar of a question about an aspect itself: the
// user's own habit or taste ("do I usually", "am I ok with", 我一般), a
// feeling ("how did I take", "how was I feeling"), a method ("how do I
// usually"). They add formWeight on top of any lexicon word or cue, so that
// the aspect outweighs the one or two topic words that say what it is
// about ("do I prefer emails or calls" is a preference, not work), as the
// lexicon's aspect rule says.
var aspectForms = []rule[string]{
	{engram.CategoryPreference, cues(formWeight, `do_i_prefer do_i_like do_i_usually do_i_take do_i_order
		do_i_go_for i_usually_go_for what_i_usually am_i_ok_with am_i_okay_with am_i_fine_with do_i_avoid do_i_mind
		do_i_eat do_i_drink do_i_wear 我习惯 我不能吃 我能不能吃 我能吃 我不吃 我爱吃 我喜欢 我不喜欢 我偏爱`)},
	{engram.CategoryEmotion, cues(formWeight, `how_did_i_take how_did_i_feel how_was_i_feeling how_do_i_feel
		how_am_i_feeling how_have_i_been_feeling how_was_i_after how_have_i_been_doing 我什么感受 我的感受
		心情如何 心情怎么样 什么心情 啥心情`)},
	{engram.CategoryStrategy, cues(formWeight, `how_do_i_usually how_did_i_manage how_do_i_manage what_worked whats_worked what_works
		我怎么克服 怎么做到 有什么办法`)},
}

// formWeight: see aspectForms; as much as an aspect keyword, tuned on the
// four tuning sets (the three of bench and testdata/dev.jsonl).
const formWeight = aspectWeight

// aspectFormTable is aspectForms compiled.
var aspectFormTable = compileTable(aspectForms)

// cueWeight is the weight of a domain cue that hints at a domain without
// naming a topic: as much as a topic keyword, so a tie with one goes to
// the earlier domain in configured order.
const cueWeight = topicWeight

// domainCueTable is domainCueRules compiled.
var domainCueTable = compileTable(domainCueRules)

// domainEvidence sums, per domain, the weights of the lexicon entries
// found in a query's terms and of the domain cues found in its normalised
// text, except a cue that restates a lexicon entry of its domain found in
// the same query ("anxi*" beside anxious, 猫 inside 养猫, "do i like"
// around like): one word counts once.
func domainEvidence(text string, terms []string) map[string]float64 {
	evidence := map[string]float64{}
	found := map[string][]string{}
	for _, e := range lexiconMatches(terms) {
		evidence[e.domain] += e.weight
		found[e.domain] = append(found[e.domain], e.text)
	}
	for _, r := range domainCueTable {
		for _, c := range r.cues {
			if c.matches(text) && !restates(c, found[r.label]) {
				evidence[r.label] += c.weight
			}
		}
	}
	for _, r := range aspectFormTable {
		evidence[r.label] += score(text, r.cues)
	}
	for d, w := range evidence {
		evidence[d] = max(w, 0)
	}
	return evidence
}

// restates reports whether cue c and one of the lexicon entries contain
// one another: the same word in two forms.
func restates(c compiledCue, entries []string) bool {
	core := strings.TrimSpace(c.pattern)
	for _, e := range entries {
		if strings.Contains(e, core) || strings.Contains(" "+core+" ", " "+e+" ") || isHanText(core) && strings.Contains(core, e) {
			return true
		}
	}
	return false
}

func isHanText(s string) bool { return strings.IndexFunc(s, isHan) >= 0 }
