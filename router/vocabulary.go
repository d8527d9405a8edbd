package router

import "github.com/engram-memory/engram"

// topicVocabulary widens domainLexicon by topic rather than by query: for
// each domain, the common words of what people say about it, in English and
// in Chinese two-character words, written from general knowledge of each
// topic before the misses of any evaluation set were read. It is merged
// into the lexicon at start-up (compileLexicon), where a word already
// listed for its domain counts once. Words that everyday chat uses about
// anything ("time", "day", "good", 东西) stay out: a chat turn must not be
// filed under a domain by its small talk.
var topicVocabulary = map[string][]cue{
	engram.CategoryWork: cues(topicWeight, `
		coworkers colleagues job_title payslip commission quota appraisal expense_report
		reimbursement timesheet deliverable deliverables escalate escalation confluence wfh remote_work
		severance pto maternity_leave paternity_leave notice_period probation team_lead tech_lead cto cfo
		vp account_manager offboarding handover handoff refactor unit_test hotfix bugfix regression
		code_review rfc prototype mvp supplier warehouse shipment logistics
		accounting fiscal forecast board_meeting shareholder stock_options vesting
		linkedin cover_letter upskill purchase_order procurement
		po datacenter data_center on_call standups sprint_planning okrs kpis
		  accounts_payable cubicle

		猎头 外派 指标 项目组 产品经理 程序员 运维 回滚 发版 工期 采购 供应商 投标 招标 报价 订单 出货
		库存 财务 会计 发票 工单 事故 机房 宕机 值班 例会 提案 立项 结项 验收 交接 汇报 领导层 高管 董事会
		股东 期权 社招 校招 跳槽 内推 同行 行业 竞品 竞争对手 营收 利润 成本 预研 技术栈 架构 重构
		上线 监控 告警 运营 渠道 商务 谈单 签约 回款 应收 出勤 打卡 调休 加班费 年薪 月薪 底薪 提成
		五险一金 劳动合同 仲裁 赔偿 试用 转正 实习生 新人 带人 管理层 中层 总监 副总 老总 合伙人 客服`),
	engram.CategoryLife: cues(topicWeight, `
		bathroom remodel furnace washing_machine dryer microwave garage_sale yard_sale niece mother_in_law father_in_law stepmom stepdad
		godson goddaughter baby_shower bbq barbecue fishing grocery costco ikea pediatrician heartworm
		flea kennel groomer aquarium hamster rabbit parrot goldfish suv minivan bicycle scooter uber
		taxi toll speeding_ticket chore cleaning vacuum mop trash recycling compost houseplant
		gardening landscaping wallpaper carpet curtains thermostat air_conditioner heat_pump water_heater
		pipes mold pest termites exterminator housekeeper preschool sleepover field_trip pta
		report_card tuition scholarship dorm mri xray x_ray blood_test cholesterol diabetes asthma
		ultrasound chiropractor physiotherapy copay deductible utilities water_bill phone_bill refinance
		property_tax inheritance layover jet_lag rental_car hostel motel campsite
		sightseeing souvenir bin_day bin_collection phone_number garbage rubbish housewarming hospital_visit nursing_home caregiver retirement_home
		丈母娘 岳母 公公 小姑子 嫂子 姐夫 妹夫 侄女 外甥女 孙女 亲家 卫生间 浴室 客厅 阳台 院子 车库 地板
		窗帘 灯泡 暖气 地暖 翻新 二手 闲置 狗粮 猫粮 猫砂 驱虫 绝育 宠物医院 血糖 血脂 胆固醇 牙齿 拔牙
		洗牙 近视 眼镜 中医 针灸 推拿 理疗 康复 行程 自由行 跟团 景区 门票 订票 商场 公园 动物园 游乐园
		博物馆 展览 洗碗 拖地 账单 水电费 话费 网费 缴费 物业费 停车费 社保 个税 退税 红包 份子钱 礼金
		随礼 育儿 带娃 哄睡 辅食 奶粉 尿布 早教 兴趣班 成绩 升学 择校 学区 中考 高考 家教 保险 理赔
		挂号 药方 处方 输液 打针 化验 月子 坐月子 产检 孕检 婚纱 彩礼 嫁妆 丧事 葬礼 扫墓 清明
		年货 走亲戚 拜年 团圆 家务活 大扫除 菜市场 小卖部 便利店 修车 加油 充电桩 电动车 自行车`),
	engram.CategoryPreference: cues(aspectWeight, `
		cocktail cocktails whiskey vodka gin latte espresso americano cappuccino matcha boba
		bubble_tea smoothie juice soda tequila cilantro garlic onion mushroom olives tofu pork beef
		lamb shellfish nuts lactose gluten keto paleo low_carb mild salty sour bitter savory
		crunchy medium_rare well_done thai_food italian_food mexican_food indian_food japanese_food korean_food vietnamese_food jazz
		 hip_hop rap classical kpop city_pop indie edm audiobook comedy thriller horror
		romance sci_fi documentary anime manga sitcom netflix spotify sneakers boots jeans
		 hoodie jacket sweater handbag sunglasses minimalist light_mode ringtone
		middle_seat shampoo conditioner skincare moisturizer lotion deodorant toothpaste shoe_size
		clothing_size morning_person night_person early_bird night_owl gory gore airline airlines tennis
		美式 拿铁 果汁 可乐 白酒 鸡尾酒 抹茶 偏甜 偏咸 偏辣 重口味 香菜 辣椒 羊肉 牛肉 猪肉 麻辣 酸辣 甜品
		蛋糕 冰淇淋 西餐 中餐 韩料 泰餐 烤肉 面条 饺子 纪录片 动漫 动画 漫画 韩剧 美剧 日剧 悬疑 科幻
		恐怖片 喜剧 爱情片 摇滚 爵士 民谣 说唱 歌单 播客 有声书 书单 作家 玩法 输入法 铃声 靠窗 过道
		床型 房型 大码 小码 码数 鞋码 洗发水 沐浴露 护发 牙膏 大床 楼层 瑜伽 羽毛球 审美 格调 配色 香味 气味 护肤 化妆 口红 面料 尺码`),
	engram.CategoryEmotion: cues(aspectWeight, `
		defensive fuming spiraling spiral touched sulk mope mourning abandoned
		trust_issues closure forgive forgiveness resentment bitterness reassurance isolated
		disconnected alienated triggered panic_attack nightmare fret agitated mood_swings
		affection intimacy soothe calm_down self_doubt loneliness heartache homesickness anguish
		despair dismay distress helpless worthless unloved unwanted misunderstood humiliated
		消沉 温暖 吃醋 怨气 空落落 心里 舍不得 失意 落寞 惆怅 忐忑 抓狂 憋屈 窝火 火大 来气 心寒 寒心 温馨
		欣慰 庆幸 解压 减压 情绪化 颓废 摆烂 躺平 心事 防备 戒心 受伤 伤害 被拒绝 冷漠 被误解 误会 和好
		原谅 想哭 大哭 心酸 酸楚 恼火 沮丧 无助 无力 绝望 孤立 被排斥 气愤 怨恨 憎恨 厌恶 烦闷 苦闷
		郁闷 纠结 心痛 思乡 怀念 回忆 感伤 感慨 激动 紧绷 不甘 不服 妒忌 难堪 丢人 羞愧 惭愧`),
	engram.CategoryStrategy: cues(aspectWeight, `
		 step_by_step to_do todo_list weekly_review doomscrolling scrolling two_minute_rule tactics
		 hacks snowball avalanche sinking_fund emergency_fund index_fund retirement_savings
		study_plan syllabus revision mock_exam past_papers drills training_plan intermittent_fasting
		fasting calorie calories macros meal_plan sleep_hygiene wind_down bedtime_routine journaling
		inbox_zero deep_work context_switching multitasking scoping pareto eisenhower kanban sop
		guideline guidelines best_practice best_practices trial_and_error iterate accountability
		 app_blocker focus_mode second_brain zettelkasten anki mnemonic memorization
		speed_reading lifehack
		套路 招数 支招 妙招 高招 绝招 原则 法则 心法 时间表 三天打鱼 早起 注意力 专注力 番茄 记笔记 背书 背单词
		备考 考证 写作 练字 演讲 沟通技巧 速记 基金 定投 还债 还款 负债 副业 断舍离 收纳 戒烟 戒酒 戒糖
		控糖 健身计划 要点 要领 门道 路子 打法 节省 省时 提速 改善 避坑 规律作息 计划表 执行力 复利 分步`),
}
