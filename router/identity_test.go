package router

import "testing"

func TestRouteIdentity(t *testing.T) {
	tests := []struct {
		query    string
		identity bool
		why      string
	}{
		{"when does the team ship?", false, "about the team"},
		{"when do we ship the billing service", false, "first person plural is the team"},
		{"remind me when the payments team deploys", false, "a frame addressing the assistant"},
		{"tell me about the Q3 roadmap discussions", false, "a frame addressing the assistant"},
		{"who owns the onboarding docs now", false, "a fact about others"},
		{"what did the client say about the invoice delay", false, "a fact about others"},
		{"what did the doctor say about my blood pressure", true, "about the user"},
		{"why have I been feeling so anxious at night", true, "about the user"},
		{"I'm really stressed about the move", true, "about the user"},
		{"tell me my dietary restrictions", true, "the frame goes, my stays"},
		{"should the team adopt trunk-based development", true, "a choice made for the user"},
		{"vegetarian restaurants near the office", true, "a preference"},
		{"我们团队什么时候发版", false, "我们 is the team"},
		{"告诉我客户那个合同什么时候签的", false, "a frame addressing the assistant"},
		{"新来的实习生叫什么名字", false, "a fact about others"},
		{"我妈的生日是几号", true, "about the user"},
		{"为什么我一开会就紧张", true, "about the user"},
		{"要不要主动跟领导提涨薪", true, "a choice made for the user"},
		{"喜欢吃辣的餐厅有哪些", true, "a preference"},
	}
	r := New(DefaultConfig())
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := r.Route("t1", tt.query)
			if got.Identity != tt.identity {
				t.Errorf("identity %v, want %v (%s); route %s/%v", got.Identity, tt.identity, tt.why, got.Intent, got.Domains[:2])
			}
		})
	}
}

func TestFirstPerson(t *testing.T) {
	for text, want := range map[string]bool{
		"i":                      true,
		"where did i put it":     true,
		"im tired":               true,
		"ive seen it":            true,
		"my":                     true,
		"myself":                 true,
		"in it":                  false,
		"what is the tenant id":  false,
		"we us our ourselves":    false,
		"i want to know the eta": false,
		"我":                      true,
		"我们":                     false,
		"我们和我":                   true,
		"咱们":                     false,
		"俺家":                     true,
	} {
		if got := firstPerson(normalize(text)); got != want {
			t.Errorf("firstPerson(%q) = %v, want %v", text, got, want)
		}
	}
}
