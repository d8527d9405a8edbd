package web

import (
	"net/http"
	"strings"
)

// langOf is the console's language for a request: the remembered choice
// (cookie), else Chinese when the browser prefers it over English, else
// English.
func langOf(r *http.Request) string {
	if ck, err := r.Cookie(langCookie); err == nil && (ck.Value == "en" || ck.Value == "zh") {
		return ck.Value
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag := strings.ToLower(strings.TrimSpace(strings.SplitN(part, ";", 2)[0]))
		switch {
		case strings.HasPrefix(tag, "zh"):
			return "zh"
		case strings.HasPrefix(tag, "en"):
			return "en"
		}
	}
	return "en"
}

// tr translates key; an unknown key shows as itself (TestMessages keeps
// every key the templates use in both languages).
func tr(lang, key string) string {
	m, ok := messages[key]
	if !ok {
		return key
	}
	if lang == "zh" {
		return m[1]
	}
	return m[0]
}

// messages holds every interface string: English, then Chinese.
var messages = map[string][2]string{
	"nav.label":       {"Sections", "栏目"},
	"nav.overview":    {"Overview", "概览"},
	"nav.memories":    {"Memories", "记忆"},
	"nav.reflections": {"Reflections", "反思"},
	"nav.feedback":    {"Feedback", "反馈"},
	"nav.pairs":       {"Pairs", "偏好数据"},
	"nav.learning":    {"Learning", "学习"},
	"nav.sessions":    {"Sessions", "会话"},
	"nav.playground":  {"Router playground", "路由试验场"},
	"nav.signin":      {"Sign in", "登录"},
	"nav.error":       {"Error", "出错了"},

	"tenant":        {"Tenant", "租户"},
	"tenant.switch": {"Switch", "切换"},
	"signout":       {"Sign out", "退出"},
	"back.overview": {"Back to the overview", "返回概览"},

	"signin.title":  {"Sign in to the engram console", "登录 engram 控制台"},
	"signin.help":   {"Use an API key: the console shows that key's tenant.", "使用 API key 登录：控制台显示该 key 所属租户的数据。"},
	"signin.key":    {"API key", "API key"},
	"signin.submit": {"Sign in", "登录"},
	"signin.where": {"The default tenant's key is in data/api_key (or ENGRAM_API_KEY); engram keys create --tenant NAME makes one for another tenant.",
		"默认租户的 key 在 data/api_key（或 ENGRAM_API_KEY）；用 engram keys create --tenant 名称 为其他租户创建 key。"},
	"signin.wrong": {"That key is unknown or revoked.", "这个 key 不存在或已被吊销。"},
	"signin.slow":  {"Too many failed sign-ins from this address; try again in a few seconds.", "此地址登录失败次数过多，请稍后几秒再试。"},
	"signin.empty": {"Enter an API key.", "请输入 API key。"},

	"stat.live":        {"memories (L2)", "条记忆（L2）"},
	"stat.reflections": {"reflections (L3)", "篇反思（L3）"},
	"stat.revision":    {"need revision", "条待修订"},
	"stat.archived":    {"archived", "条已归档"},
	"stat.tombstoned":  {"deleted", "条已删除"},
	"stat.feedback":    {"votes in 14 days", "次反馈（14 天）"},

	"chart.layers":     {"Memories by layer", "各层记忆数"},
	"chart.categories": {"Live memories by category", "各类别的有效记忆"},
	"chart.votes":      {"Feedback per day: up vs down (14 days)", "每日反馈：赞 vs 踩（14 天）"},
	"chart.rewards":    {"Reward distribution of live memories", "有效记忆的 reward 分布"},
	"layer.l2":         {"L2 memories", "L2 记忆"},
	"layer.l3":         {"L3 reflections", "L3 反思"},
	"vote.up":          {"up", "赞"},
	"vote.down":        {"down", "踩"},

	"empty.overview.title": {"No memories yet", "还没有记忆"},
	"empty.overview.body": {"This tenant is empty. Products write memories through the API (or MCP); the first one appears here at once.",
		"这个租户还是空的。产品通过 API（或 MCP）写入记忆，写入后会立即出现在这里。"},
	"empty.votes": {"No feedback in the last 14 days: post thumbs or ratings to /v1/feedback and they are charted here.",
		"最近 14 天没有反馈：向 /v1/feedback 提交点赞、点踩或评分后，这里会画出图表。"},
	"empty.memories.title": {"No memories yet", "还没有记忆"},
	"empty.memories.body": {"Memories are written with POST /v1/memories, PUT /v1/keys/… or the MCP remember tool.",
		"记忆可以通过 POST /v1/memories、PUT /v1/keys/… 或 MCP 的 remember 工具写入。"},
	"empty.memories.filtered": {"No memory matches these filters.", "没有符合这些条件的记忆。"},
	"empty.reflections.title": {"No reflections yet", "还没有反思"},
	"empty.reflections.body": {"The reflector writes one per group of at least three memories. Run it now, or let the sleep cycle do it:",
		"反思器为每组（至少三条）记忆写一篇反思。可以现在运行，或交给睡眠周期："},
	"empty.feedback.title": {"No feedback yet", "还没有反馈"},
	"empty.feedback.body": {"Thumbs and ratings posted on recalls, interactions or memories show up here, newest first.",
		"对召回、交互或记忆提交的点赞、点踩和评分会显示在这里，最新的在前。"},
	"empty.pairs": {"No preference pairs yet. A pair needs two answers to one prompt: a regeneration judged differently, a correction, or ratings two stars apart.",
		"还没有偏好对。一对数据需要同一提示的两个回答：评价不同的重新生成、用户更正，或相差两星以上的评分。"},
	"empty.unpaired": {"No judged answers yet: interactions with a thumb or rating are exported here.",
		"还没有带评价的回答：有点赞、点踩或评分的交互会在这里导出。"},
	"empty.recall": {"Nothing was recalled: no memory matched, or none fitted the budget.",
		"没有召回任何记忆：没有匹配的记忆，或都放不进预算。"},
	"empty.promoted":       {"No memory was promoted this week.", "本周没有记忆被提升。"},
	"empty.sessions.title": {"No live sessions", "没有进行中的会话"},
	"empty.sessions.body": {"L1 sessions (working memory) appear here while they live: a product posts a conversation's turns or an agent's run to",
		"L1 会话（工作记忆）在有效期内显示在这里：产品把对话的轮次或智能体的运行过程发送到"},
	"empty.events": {"This session has no events.", "这个会话没有事件。"},
	"empty.raters": {"No rater has lost weight: every rater's votes agree with the others' evidence as often as not.",
		"没有评价者的权重下降：每位评价者的投票与其他人的证据至少同样经常一致。"},
	"empty.demoted": {"No memory was demoted this week.", "本周没有记忆被降级。"},

	"filter.q":        {"Search", "搜索"},
	"filter.q.hint":   {"words of the content", "内容中的词"},
	"filter.category": {"Category", "类别"},
	"filter.any":      {"any", "全部"},
	"filter.all":      {"All", "全部"},
	"filter.tag":      {"Tag", "标签"},
	"filter.key":      {"Key prefix", "key 前缀"},
	"filter.revision": {"needs revision", "待修订"},
	"filter.search":   {"Search", "搜索"},
	"filter.clear":    {"Clear", "清除"},

	"col.content":  {"Content", "内容"},
	"col.category": {"Category", "类别"},
	"col.tags":     {"Tags", "标签"},
	"col.reward":   {"Reward", "reward"},
	"col.votes":    {"Votes", "投票"},
	"col.updated":  {"Updated", "更新时间"},
	"col.action":   {"Action", "操作"},
	"col.when":     {"When", "时间"},
	"col.changes":  {"Changes", "变更"},
	"col.signal":   {"Signal", "信号"},
	"col.target":   {"Target", "对象"},
	"col.rater":    {"Rater", "评价者"},
	"col.reason":   {"Reason", "理由"},
	"col.tokens":   {"Tokens", "token"},
	"col.score":    {"Score", "得分"},

	"badge.revision": {"needs revision", "待修订"},
	"badge.deleted":  {"deleted", "已删除"},
	"badge.archived": {"archived", "已归档"},
	"pager.next":     {"Next page →", "下一页 →"},
	"pager.older":    {"Older →", "更早 →"},

	"memory.back":         {"back to the reflection", "返回反思"},
	"memory.rolled":       {"Rolled back to version %s.", "已回滚到版本 %s。"},
	"memory.content":      {"Content", "内容"},
	"memory.summary":      {"Summary", "摘要"},
	"memory.data":         {"Data", "数据"},
	"memory.provenance":   {"Provenance", "来源"},
	"memory.source":       {"Source", "source"},
	"memory.context":      {"Context", "上下文"},
	"memory.agent":        {"Agent", "智能体"},
	"memory.created":      {"Created", "创建"},
	"memory.updated":      {"Updated", "更新"},
	"memory.accessed":     {"Last recalled", "最近召回"},
	"memory.tokens":       {"Tokens", "token 数"},
	"memory.score":        {"Score factors", "评分因素"},
	"memory.citedby":      {"Cited by", "被以下反思引用"},
	"memory.citedby.none": {"No reflection cites this memory.", "没有反思引用这条记忆。"},
	"memory.history":      {"History", "历史"},
	"memory.rollback":     {"Roll back to this", "回滚到此版本"},
	"memory.rollback.confirm": {"Restore the state after version %d as a new version?",
		"把版本 %d 之后的状态恢复为一个新版本？"},

	"factor.relevance":    {"Relevance", "相关度"},
	"factor.reward":       {"Reward factor", "reward 因子"},
	"factor.confidence":   {"Confidence", "置信度"},
	"factor.retention":    {"Retention", "保持率"},
	"factor.revision":     {"Revision", "修订惩罚"},
	"factor.superseded":   {"Superseded", "被更新"},
	"factor.newer":        {"newer", "较新"},
	"factor.supersededby": {"by a newer memory of the same origin and subject (entity / attribute)", "被同一来源、同一主题（实体 / 属性）的较新记忆取代"},
	"factor.match":        {"Match", "匹配度"},
	"factor.match.help": {"How well the memory answers the query, on the same scale for every recall; the relevance cut compares it with a fixed threshold",
		"记忆回答该查询的程度，所有召回同一尺度；相关性截断用它与固定阈值比较"},
	"factor.product": {"Product", "乘积"},
	"factor.age":     {"%s days since reinforced, stability %s d", "距上次强化 %s 天，稳定度 %s 天"},
	"factor.note":    {"at full relevance; a recall multiplies by its relevance", "按相关度 1 计算；召回时再乘以相关度"},

	"reflection.cites":    {"%d citations", "%d 处引用"},
	"reflection.old":      {"This is version %d; the current one is %d.", "这是第 %d 版；当前版本是第 %d 版。"},
	"reflection.about":    {"About", "信息"},
	"reflection.group":    {"Group", "分组"},
	"reflection.writer":   {"Writer", "撰写方式"},
	"reflection.versions": {"Versions", "版本"},
	"reflection.cited":    {"Cited memories", "引用的记忆"},

	"target.recall":       {"recall", "召回"},
	"target.interaction":  {"interaction", "交互"},
	"feedback.correction": {"correction", "更正"},

	"pairs.help": {"Preference pairs for training, with provenance; a lone thumb is exported as unpaired data, never as a fake pair.",
		"用于训练的偏好数据，带来源；单个评价只导出为非成对数据，不会伪造成对。"},
	"pairs.format":     {"Format", "格式"},
	"pairs.preview":    {"Preview: %s", "预览：%s"},
	"pairs.more":       {"… the download has the rest.", "……其余内容请下载。"},
	"pairs.download":   {"Download JSON Lines", "下载 JSON Lines"},
	"pairs.provenance": {"Provenance: the memories in context for each answer", "来源：每个回答的上下文中有哪些记忆"},
	"pairs.kind":       {"Kind", "类型"},
	"pairs.margin":     {"Margin", "差值"},
	"pairs.chosen":     {"Chosen", "选中"},
	"pairs.rejected":   {"Rejected", "拒绝"},

	"learning.since":    {"What feedback did to memories since %s.", "自 %s 以来反馈对记忆的影响。"},
	"learning.promoted": {"Promoted this week", "本周提升"},
	"learning.demoted":  {"Demoted this week", "本周降级"},
	"learning.net":      {"Net signal", "净信号"},
	"learning.raters":   {"Raters", "评价者"},
	"learning.capped":   {"Capped", "被限额"},
	"learning.note": {"Votes are the credits applied to each memory; capped ones were recorded but not applied (one rater's cap per memory and window).",
		"投票是计入每条记忆的反馈；被限额的反馈已记录但未生效（同一评价者对同一记忆在时间窗口内的上限）。"},

	"learning.help":       {"Helpfulness", "有用度"},
	"learning.evidence":   {"Evidence good / bad", "证据 好 / 坏"},
	"learning.origin":     {"origin", "来源"},
	"learning.originhelp": {"The part of the factor earned by every memory written the same way (agent, source, type).", "同样方式写入的记忆（代理、来源、类型）共同得到的那部分系数。"},
	"learning.impact":     {"Impact", "影响"},
	"learning.unmeasured": {"not measured", "未测量"},
	"learning.ratersfell": {"Raters whose weight fell", "权重下降的评价者"},
	"learning.ratershelp": {"A rater whose votes keep contradicting other raters' evidence counts less in every credit and in all evidence.",
		"投票总与其他评价者证据相矛盾的评价者，在每次计分和所有证据中的权重都会降低。"},
	"learning.weight":   {"Weight", "权重"},
	"learning.agree":    {"Agree", "一致"},
	"learning.disagree": {"Disagree", "不一致"},

	"sessions.help": {"The tenant's live L1 sessions (working memory), most recently active first; at most %d.",
		"本租户进行中的 L1 会话（工作记忆），最近活跃的在前；最多 %d 个。"},
	"session.id":       {"Session", "会话"},
	"session.resource": {"Resource", "资源"},
	"session.status":   {"Status", "状态"},
	"session.open":     {"open", "进行中"},
	"session.closed":   {"closed", "已结束"},
	"session.events":   {"Events", "事件"},
	"session.created":  {"Created", "创建时间"},
	"session.active":   {"Last active", "最近活跃"},
	"session.expires":  {"Expires", "过期时间"},
	"session.context":  {"Rendered context", "渲染后的上下文"},
	"session.context.help": {"What GET /v1/sessions/{id}/context returns: the session as a prompt section within the token limit.",
		"即 GET /v1/sessions/{id}/context 的返回：在 token 上限内渲染成提示词片段的会话。"},
	"session.render":   {"Render", "渲染"},
	"session.badlimit": {"The token limit must be a whole number.", "token 上限必须是整数。"},
	"session.meter":    {"Tokens used against the limit", "已用 token 与上限"},
	"session.rounds":   {"Rounds: %d whole, %d compressed, %d dropped", "轮次：完整 %d，压缩 %d，丢弃 %d"},
	"session.recent":   {"Recent events", "最近事件"},
	"session.type":     {"Type", "类型"},
	"session.who":      {"Who", "发言者"},
	"session.more":     {"%d older events are not shown.", "另有 %d 个更早的事件未显示。"},

	"playground.help": {"Try a query: see how the router reads it and what recall packs into the budget. Each run is recorded as a recall.",
		"输入一个查询，看看路由如何理解它、召回在预算内装入了什么。每次运行都会记录为一次召回。"},
	"playground.query":      {"Query", "查询"},
	"playground.query.hint": {"e.g. How does the user take their coffee?", "例如：用户喝咖啡加不加糖？"},
	"playground.budget":     {"Token budget", "token 预算"},
	"playground.run":        {"Recall", "召回"},
	"playground.badbudget":  {"The budget must be a whole number.", "预算必须是整数。"},
	"playground.route":      {"Route", "路由"},
	"playground.packed":     {"Packed context", "装入的上下文"},
	"playground.used":       {"%d of %d tokens used", "已用 %d / %d 个 token"},
	"playground.total":      {"Tokens used against the budget", "已用 token 与预算"},
	"playground.degraded":   {"Degraded", "降级"},
	"playground.summary":    {"summary used", "使用了摘要"},
	"playground.context":    {"Context as injected", "注入的上下文"},
	"playground.pinned":     {"pinned context", "固定上下文"},
	"playground.pinned.help": {"Injected as context whatever the query (an identity memory); feedback on this recall does not credit it",
		"无论查询如何都作为上下文注入（身份记忆）；对本次召回的反馈不计入它"},
	"playground.leftout": {"Left out", "未装入"},
	"playground.leftout.help": {"The best-scored candidates that were not injected, and why.",
		"得分最高但未注入的候选记忆，以及原因。"},
	"playground.cut":   {"Why", "原因"},
	"cut.below_cut":    {"below the relevance cut", "低于相关性截断"},
	"cut.superseded":   {"superseded", "已被更新取代"},
	"cut.budget":       {"did not fit the budget", "超出预算"},
	"cut.held_back":    {"held back (exploration)", "探索时暂不注入"},
	"cut.by":           {"by the newer memory", "取代它的较新记忆"},
	"route.intent":     {"Intent", "意图"},
	"route.mode":       {"Mode", "模式"},
	"route.categories": {"Categories", "类别"},
	"route.layers":     {"Layers", "层"},
}
