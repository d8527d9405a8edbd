package router

import (
	"strings"

	"github.com/engram-memory/engram"
)

// The tables below are the router's priors: hand-written, bilingual, and
// small enough to read. Cues are matched against the normalised query (see
// normalize): an English cue must match whole words, a trailing "*" makes
// its last word a prefix ("recommend*" also matches "recommendation"), and a
// Chinese cue matches anywhere. Weights say how strongly a cue speaks: a
// question word ("why", 为什么) outweighs a modifier ("last week", 去年).

// cue is one weighted phrase of a rule table.
type cue struct {
	text   string
	weight float64
}

// rule is one label of a rule table with the cues that speak for it.
type rule[T any] struct {
	label T
	cues  []cue
}

// cues builds weight-w cues from a whitespace-separated list; "_" stands for
// a space inside one cue ("should_i").
func cues(w float64, list string) []cue {
	fields := strings.Fields(list)
	out := make([]cue, len(fields))
	for i, f := range fields {
		out[i] = cue{text: strings.ReplaceAll(f, "_", " "), weight: w}
	}
	return out
}

// intentRules score the intents; the best total wins, ties go to the earlier
// rule, and a query that matches nothing is an ask. A "why" question seeks
// an explanation, so it outweighs a weak decide cue ("why does my plan
// fail") but not a strong one ("why should I").
var intentRules = []rule[engram.Intent]{
	{engram.IntentReflect, join(
		cues(3, `what_have_i_learned what_did_i_learn what_i_learned have_i_learned lesson* looking_back
			look_back in_hindsight hindsight mistake* taught_me retrospective retro postmortem post_mortem
			reflect* what_went_wrong what_went_well keep_making do_differently did_differently takeaway*
			总结 反思 回顾 教训 复盘 踩过 踩坑 犯过 学到 收获 走出来 弯路`),
		cues(1, `learned_from learn_from 经验`),
	)},
	{engram.IntentDecide, join(
		cues(2, `should_i should_we shall_i which_is_better which_one_should better_to recommend* suggest*
			plan_a plan_my plan_the decide decision choose pick_a pick_one is_it_worth worth_it
			or_should what_should how_should advice advise help_me_choose help_me_decide ideas_for
			some_ideas whether_to do_you_think_i what_would_you plan_for how_can_i
			应该 推荐 选哪 挑一 建议 怎么办 要不要 该不该 值不值 去不去 回不回 买不买 换不换 接不接
			用不用 哪个好 比较好 帮我定 帮我选 帮我挑 打算 我该 该怎么 定个计划 做个计划 怎样才能 怎么才能 如何才能`),
		cues(1, `planning 计划 还是 选择 可以吗 好吗 行不行`),
	)},
	{engram.IntentAsk, cues(2, `why how_come 为什么 为啥 为何`)},
}

// modeRules score the retrieval modes in the same way. No match is factual,
// except for a reflect query, which is exploratory: lessons are gathered
// across memories, not looked up. Temporal cues are past references only:
// memories lie in the past, so "tomorrow" or "next week" says nothing about
// how to search them; and "when" counts only as a question ("when did"),
// not in "when I'm tired".
var modeRules = []rule[engram.Mode]{
	{engram.ModeCausal, join(
		cues(3, `why how_come what_made what_makes what_led led_to reason* due_to because cause* trigger*
			为什么 为啥 原因 导致 怎么会 怎么回事 因为 靠什么 引起 造成 为何`),
		cues(1, `what_went_wrong explain result_of`),
	)},
	{engram.ModeTemporal, join(
		cues(3, `when_is when_was when_did when_do when_does when_will when_are when_were when_have when_has
			when_am since_when how_long what_time what_date how_often how_many_times
			什么时候 多久 几点 几号 哪天 哪一天 何时 多长时间 哪年 几月`),
		cues(1, `yesterday last_night last_week last_month last_year last_weekend last_summer last_winter
			last_spring last_fall last_time ago recently lately this_week this_month this_year this_summer
			this_winter this_spring this_fall so_far
			january february march april june july august september october november december
			昨天 前天 上周 上个 去年 前年 今年 本月 这个月 这周 上次 最近 那段时间 这一年 这半年 那年 当年 以前
			上半年 至今`),
	)},
	{engram.ModeExploratory, join(
		cues(3, `tell_me_about anything_about anything_on anything_that ideas what_kind_of what_are_some
			some_ideas overview everything_about explore brainstorm any_thoughts talk_about what_else
			catch_me_up fill_me_in whats_going_on whats_new any_updates update_me
			有哪些 聊聊 讲讲 谈谈 介绍一下 说说 什么样 哪些 进展 近况 怎么样了`),
		cues(1, `options kinds types recommend* suggest* 一些 有什么 推荐`),
	)},
}

// constraintCues mark a query whose answer must respect the user's
// constraints or preferences: such queries always search "preference".
var constraintCues = join(cues(1, `allerg* cant cannot avoid* budget must vegetarian vegan dont_eat
	dont_like dont_want without pricey cheap expensive diet* intoleran* kosher halal
	过敏 不能 不吃 不喝 避免 预算 必须 忌口 素食 不要 别太 太贵 便宜 口味 喜欢 讨厌`))

// domainLexicon holds the prior keywords of the default domains. Each entry
// is run through analysis.Terms at start-up and matched as a run of
// consecutive query terms, so "meetings" finds "meeting" and 加班 finds
// 今天又加班了. Extra configured categories have no lexicon: they are
// learned from the tenant's memories alone.
//
// Work and life name a topic; preference, emotion and strategy name an
// aspect of one, and the aspect decides where the memory was filed ("why
// do I hate open-plan offices" is a preference, "my anger with my brother"
// an emotion), so aspect keywords weigh topicWeight·1.5. Habit words
// ("usually", 一般) hint at a preference but weigh half a topic word.
var domainLexicon = map[string][]cue{
	engram.CategoryWork: cues(topicWeight, `
		work job office meeting project deadline boss manager colleague coworker team client
		customer code deploy release sprint standup ticket bug jira roadmap
		quarterly okr kpi promotion raise salary career hire onboarding report
		presentation invoice contract vendor stakeholder launch migration api server
		database incident outage oncall reorg layoff company startup business
		design_review pull_request engineer product slack retro staging repo merge pipeline
		feature spec requirement qa ship headcount intern bonus conference workshop
		kickoff demo pitch investor revenue sales marketing department
		会议 开会 项目 老板 领导 同事 加班 工作 上班 公司 客户 需求 排期 上线 发布 部署 代码 评审
		周会 周报 日报 汇报 合同 产品 团队 裁员 跳槽 面试 升职 加薪 工资 绩效 季度 经理 出差 对接
		任务 进度 延期 上级 下属 招聘 入职 离职 业务 开发 测试 版本 故障 晋升 答辩 实习 站会 早会
		例会 上司 部门 组长 主管 年终奖 奖金 涨薪 薪资 简历 甲方 乙方 交付 迭代 提测 服务器 线上
		报错 文档 职场`),
	engram.CategoryLife: cues(topicWeight, `
		family mom mother dad father sister brother wife husband partner kid child son
		daughter grandma grandpa parents home house apartment rent landlord move
		dentist doctor hospital health blood_pressure gym sleep travel trip flight vacation
		holiday hotel weekend birthday anniversary wedding school groceries cooking pet dog
		cat car insurance bank bills wifi address neighbor neighbour friend
		 visit party pediatrician vaccine medicine meds pharmacy cousin aunt uncle
		niece nephew relatives baby pregnant yard garden electricity utility
		plumber repair mechanic commute shopping recipe laundry chores christmas
		thanksgiving beach camping hiking passport visa married funeral vet
		家人 家里 爸爸 妈妈 爸妈 父母 我妈 我爸 老婆 老公 孩子 儿子 女儿 爷爷 奶奶 外婆 家长 学校
		牙医 牙科 医生 医院 体检 看病 生病 感冒 旅行 旅游 出去玩 机票 民宿 周末 假期 放假 国庆 过年
		春节 老家 回家 生日 结婚 搬家 房子 房租 租房 装修 宽带 朋友 宠物 买菜 做饭 失眠 睡觉 健身
		全家 邻居 小区 亲戚 舅舅 姑姑 阿姨 叔叔 婆婆 岳父 对象 男朋友 女朋友 婚礼 怀孕 宝宝 幼儿园
		老师 开学 接送 买房 房贷 车贷 保险 银行 信用卡 电费 水费 物业 维修 保养 驾照 签证 护照 机场
		高铁 火车 景点 度假 露营 爬山 逛街 购物 超市 菜谱 家务 打扫 吃药 疫苗 挂号 养猫 猫咪 狗狗
		遛狗`),
	engram.CategoryPreference: join(
		cues(aspectWeight, `
			like prefer favorite favourite love hate dislike enjoy style taste
			allergic allergy diet dietary vegetarian vegan spicy sweet sugar coffee tea music
			movie food restaurant seat window aisle font color colour tone format
			care_about picky rather podcast show series genre brand cuisine dish
			 snack drink wine beer milk sauce flavor flavour outfit clothes wear fashion
			theme dark_mode keyboard shoes hobby interests fan vibe
			喜欢 偏好 讨厌 口味 习惯 爱吃 不吃 不喝 忌口 过敏 香菜 咖啡 风格 品味 在意 宁愿 最爱
			音乐 电影 衣服 颜色 字体 餐厅 爱好 牛奶 甜食 吃辣 喝茶 穿搭 讲究 品牌 款式 菜系 零食
			饮料 奶茶 啤酒 红酒 偏爱 不爱 受不了 接受不了 吃不惯 喜好 兴趣 追剧 综艺 歌手 深色模式
			键盘`),
		cues(topicWeight/2, `usually normally 一般 通常 平时`),
	),
	engram.CategoryEmotion: cues(aspectWeight, `
		feel felt mood sad happy unhappy upset depressed anxious anxiety
		stress angry anger mad frustrated lonely loneliness burnout overwhelmed cry
		scared afraid fear panic worried grief heartbroken breakup irritable calm
		excited proud jealous guilty ashamed emotion therapist therapy mental
		 cope cheer nervous happiest happier joy exhausted drained hurt resent annoyed
		disappointed hopeless insecure embarrassed nostalgic homesick tears
		heart confidence
		心情 情绪 难过 伤心 开心 高兴 快乐 焦虑 压力 抑郁 沮丧 生气 愤怒 烦躁 郁闷 孤独 寂寞 害怕
		担心 紧张 崩溃 委屈 失落 低落 心累 分手 吵架 心理 难受 失恋 内耗 没意思 无聊 感动 幸福 哭了
		空落落 心里 心慌 不开心 不爽 心烦 自卑 自责 内疚 后悔 失望 绝望 迷茫 空虚 疲惫 挫败 批评
		眼泪 感受 心态 安全感 想家 思念 想念 恐惧`),
	engram.CategoryStrategy: cues(aspectWeight, `
		strategy approach method technique tip trick tactic best_way process
		workflow habit routine framework practice prep prepare efficient
		productive focus improve optimize hack advice guide pomodoro
		time_blocking study exam negotiate budgeting saving goal
		discipline estimate faster quicker shortcut prioritize
		prioritise organize organise motivation consistent scoping invest
		
		方法 办法 策略 技巧 窍门 经验 怎么做 如何 流程 套路 诀窍 效率 提高 坚持 计划 准备 番茄钟
		学习 背单词 考试 理财 预算 减肥 谈判 时间管理 步骤 思路 有效 成功 才能 秘诀 省时间 弯路 早起
		自律 规划 管用 奏效 见效 提升 存钱 攒钱 投资 记账 练习 刷题 复习`),
}

// functionWords are Chinese words that carry grammar, not topic; analysis
// keeps them (it removes only English stop words), so the learned model
// skips them, with the cue terms.
const functionWords = `什么 是什么 怎么 怎么样 怎样 这个 那个 这些 那些 一个 一些 一下 我们 你们 他们 她们 自己
	可以 没有 就是 不是 还是 现在 时候 然后 所以 但是 如果 因为 已经 还有 的话 一直 一般 总是 老是 有点 比较
	这样 那样 来着 有没有 了吗 的吗`

// Lexicon weights: see domainLexicon.
const (
	topicWeight  = 1.0
	aspectWeight = 1.5 * topicWeight
)

func join(lists ...[]cue) []cue {
	var out []cue
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
