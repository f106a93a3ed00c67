package rules

import (
	"regexp"
	"testing"
)

// The literal fast path must answer exactly like the regular expression it replaces.
func TestMatcher_SameAnswerAsRegexp(t *testing.T) {
	corpus := []string{
		"Deployment is done", "REDEPLOYED yesterday", "we deploy", "deploys", "git pushed", "GIT PUSH origin", "k8s", "K8S cluster",
		"x.service", "approve_all", "approved", "Approve!", "deny-list", "ssh-keygen", "ssh_config", "(ssh)", "ssh", "SSH接続",
		"再起動して", "サーバを起動", "サービス停止", "本番へ反映", "本番反映", "バグ直して", "関数を書いて", "テストコード追加",
		"analyse", "ANALYZE", "analyzer", "trend", "trends.", "csv", "csvs", "json5", "planet", "plans", "planning!", "schedule_x",
		"look up", "lookup", "fix a bug", "fix the bugs", "write unit tests", "write some code", "implementation", "",
		"ＡＢＣ", "İstanbul deploy", "_deploy", "deploy_", "1deploy", "deploy1", "ロールバック", "rollback", "roll back", "roll  back",
	}
	for _, cases := range defaultRuleCases {
		corpus = append(corpus, cases.matchJA...)
		corpus = append(corpus, cases.matchEN...)
		corpus = append(corpus, cases.noMatchJA...)
		corpus = append(corpus, cases.noMatchEN...)
	}
	d := loadDefault(t)
	literal := 0
	for _, r := range d.Rules() {
		for i, p := range r.Patterns {
			m, err := compile(p, false)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.(literalMatcher); ok {
				literal++
			}
			re := regexp.MustCompile("(?i)" + p)
			for _, in := range corpus {
				_, got := m.match(in, lowerOnce(in))
				if want := re.MatchString(in); got != want {
					t.Errorf("rule %s pattern %d on %q: matcher %v, regexp %v", r.Name, i+1, in, got, want)
				}
			}
		}
	}
	if literal < 15 {
		t.Errorf("only %d default patterns use the literal fast path", literal)
	}
}

func TestMatcher_Literals(t *testing.T) {
	tests := []struct {
		expr    string
		cs      bool
		literal bool
		in      string
		want    bool
	}{
		{`再起動|デプロイ`, false, true, "nginxを再起動", true},
		{`(サーバ|サービス)を?(起動|停止)`, false, true, "サービス停止", true},
		{`\b(deploy|restart)(s|ed)?\b`, false, true, "Restarted it", true},
		{`\b(deploy|restart)(s|ed)?\b`, false, true, "restarting", false},
		{`NGINX`, true, true, "nginx", false},
		{`NGINX`, true, true, "NGINX", true},
		{`a*`, false, false, "anything", true},
		{`(?m)^panic: `, false, false, "x\npanic: boom", true},
		{`\d+ items`, false, false, "3 items", true},
	}
	for _, tt := range tests {
		m, err := compile(tt.expr, tt.cs)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(literalMatcher); ok != tt.literal {
			t.Errorf("%s: literal %v, want %v", tt.expr, ok, tt.literal)
		}
		if _, got := m.match(tt.in, lowerOnce(tt.in)); got != tt.want {
			t.Errorf("%s on %q: %v, want %v", tt.expr, tt.in, got, tt.want)
		}
	}
}
