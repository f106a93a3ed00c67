package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// defaultRulesPath is the shipped dictionary, relative to this package.
var defaultRulesPath = filepath.Join("..", "..", "..", "..", "config", "rules.yaml")

func loadDefault(tb testing.TB) *Dictionary {
	tb.Helper()
	data, err := os.ReadFile(defaultRulesPath)
	if err != nil {
		tb.Fatalf("read default rules: %v", err)
	}
	d, err := Parse(data)
	if err != nil {
		tb.Fatalf("default rules: %v", err)
	}
	return d
}

// ruleCase holds, for one default rule, inputs it must decide (as the first matching rule)
// and inputs it must not match at all, in Japanese and English.
type ruleCase struct {
	route                domain.Route
	matchJA, matchEN     []string
	noMatchJA, noMatchEN []string
}

var defaultRuleCases = map[string]ruleCase{
	"chat.approval": {
		route:     domain.RouteChat,
		matchJA:   []string{"さっきのジョブを承認します", "これは却下で"},
		matchEN:   []string{"please approve job_20260301_001", "I deny that change"},
		noMatchJA: []string{"今日はいい天気ですね"},
		noMatchEN: []string{"approximately how long will it take?"},
	},
	"code.unified_diff": {
		route:     domain.RouteCode,
		matchJA:   []string{"この差分を見て\ndiff --git a/main.go b/main.go\nindex 1..2\n"},
		matchEN:   []string{"review this:\n--- a/README\n+++ b/README\n@@ -1,2 +1,3 @@\n hello\n"},
		noMatchJA: []string{"差分について説明して"},
		noMatchEN: []string{"what is a diff --- in general?"},
	},
	"code.fence": {
		route:     domain.RouteCode,
		matchJA:   []string{"これ動かない\n```\nfmt.Println(x)\n```"},
		matchEN:   []string{"here is the snippet:\n```python\nprint(1)\n```"},
		noMatchJA: []string{"バッククォート ` の使い方"},
		noMatchEN: []string{"inline `code` only"},
	},
	"code.stack_trace": {
		route: domain.RouteCode,
		matchJA: []string{
			"エラーが出ました\npanic: runtime error: index out of range\n\ngoroutine 1 [running]:\n",
			"落ちた\nTraceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n",
		},
		matchEN: []string{
			"got this\nException in thread \"main\" java.lang.NullPointerException\n\tat com.example.App.run(App.java:12)\n",
			"TypeError\n    at render (/srv/app/index.js:10:5)\n",
		},
		noMatchJA: []string{"パニックにならないで"},
		noMatchEN: []string{"don't panic, the goroutine count is fine"},
	},
	"ops.systemd": {
		route:     domain.RouteOps,
		matchJA:   []string{"systemctl status nginx の結果を見て", "picoclaw.service の状態は?"},
		matchEN:   []string{"check journalctl for errors", "is the systemd timer enabled?"},
		noMatchJA: []string{"サービス精神が大事"},
		noMatchEN: []string{"the customer service was great"},
	},
	"ops.docker": {
		route:     domain.RouteOps,
		matchJA:   []string{"dockerのイメージを消して", "コンテナが落ちてる"},
		matchEN:   []string{"run kubectl get pods", "docker-compose up fails"},
		noMatchJA: []string{"船のドックに行った"},
		noMatchEN: []string{"the dockerfile-like syntax of dockering"},
	},
	"ops.ssh": {
		route:     domain.RouteOps,
		matchJA:   []string{"サーバにsshで入って", "rsyncでバックアップ取って"},
		matchEN:   []string{"ssh into the box", "scp the file over"},
		noMatchJA: []string{"シェルについて教えて"},
		noMatchEN: []string{"sshh, be quiet"},
	},
	"ops.git": {
		route:     domain.RouteOps,
		matchJA:   []string{"mainにマージして", "git pushしておいて"},
		matchEN:   []string{"git pull origin main please", "can you git rebase onto main"},
		noMatchJA: []string{"ギットハブのアカウントについて"},
		noMatchEN: []string{"what is git?"},
	},
	"ops.restart_deploy": {
		route:     domain.RouteOps,
		matchJA:   []string{"nginxを再起動して", "本番にデプロイして"},
		matchEN:   []string{"restart nginx", "deploy the new build"},
		noMatchJA: []string{"起動時間を教えて"},
		noMatchEN: []string{"a fresh start for the deployment team's morale"},
	},
	"code.file_name": {
		route:     domain.RouteCode,
		matchJA:   []string{"main.goを見直して", "src/app.tsの型が変"},
		matchEN:   []string{"what does handler.py do?", "open pkg/llm/llm.go"},
		noMatchJA: []string{"ファイル名を決めたい"},
		noMatchEN: []string{"go to the park"},
	},
	"code.request": {
		route:     domain.RouteCode,
		matchJA:   []string{"ソートする関数を書いて", "このクラスをリファクタリングして"},
		matchEN:   []string{"implement a retry helper", "write a unit test for the parser"},
		noMatchJA: []string{"関数って何?"},
		noMatchEN: []string{"what is a function?"},
	},
	"analyze.log_lines": {
		route:     domain.RouteAnalyze,
		matchJA:   []string{"これ見て\n2026-03-01 10:00:01 ERROR a\n2026-03-01 10:00:02 WARN b\n2026-03-01 10:00:03 INFO c\n"},
		matchEN:   []string{"Mar  1 10:00:01 host sshd: a\nMar  1 10:00:02 host sshd: b\nMar  1 10:00:03 host cron: c\n"},
		noMatchJA: []string{"2026-03-01 10:00:01 に一行だけ\n"},
		noMatchEN: []string{"one line 2026-03-01 10:00:01 only\n"},
	},
	"analyze.data_format": {
		route:     domain.RouteAnalyze,
		matchJA:   []string{"このCSVの列を整理して", "スプレッドシートの売上を見て"},
		matchEN:   []string{"here is a json export of orders", "parse this TSV"},
		noMatchJA: []string{"今日のご飯は何?"},
		noMatchEN: []string{"jason said hi"},
	},
	"analyze.keywords": {
		route:     domain.RouteAnalyze,
		matchJA:   []string{"このログを集計して傾向を教えて", "売上の統計を出して"},
		matchEN:   []string{"analyze these numbers", "give me a breakdown by month"},
		noMatchJA: []string{"こんにちは、元気?"},
		noMatchEN: []string{"analog clocks are nice"},
	},
	"research.url": {
		route:     domain.RouteResearch,
		matchJA:   []string{"https://example.com/news の内容をまとめて"},
		matchEN:   []string{"summarise http://example.org/paper.pdf"},
		noMatchJA: []string{"ウェブサイトのアドレスを忘れた"},
		noMatchEN: []string{"the http protocol is old"},
	},
	"research.keywords": {
		route:     domain.RouteResearch,
		matchJA:   []string{"Rustの非同期ランタイムを調べて", "競合サービスをリサーチして"},
		matchEN:   []string{"research vector databases", "look up the latest Go release"},
		noMatchJA: []string{"おはよう"},
		noMatchEN: []string{"lookup tables are fast"},
	},
	"plan.keywords": {
		route:     domain.RoutePlan,
		matchJA:   []string{"引っ越しの段取りを考えて", "来月の計画を立てたい"},
		matchEN:   []string{"make a plan for the migration", "draft a roadmap for Q3"},
		noMatchJA: []string{"ありがとう"},
		noMatchEN: []string{"explain the planet orbits"},
	},
}

func TestDefaultRules_EveryRuleHasACase(t *testing.T) {
	d := loadDefault(t)
	names := map[string]bool{}
	for _, r := range d.Rules() {
		names[r.Name] = true
		c, ok := defaultRuleCases[r.Name]
		if !ok {
			t.Errorf("default rule %s has no table test", r.Name)
			continue
		}
		if c.route != r.Route {
			t.Errorf("rule %s: route %s, table expects %s", r.Name, r.Route, c.route)
		}
		if len(c.matchJA) == 0 || len(c.matchEN) == 0 || len(c.noMatchJA) == 0 || len(c.noMatchEN) == 0 {
			t.Errorf("rule %s: table needs matching and non-matching inputs in ja and en", r.Name)
		}
	}
	for name := range defaultRuleCases {
		if !names[name] {
			t.Errorf("table has %s, which is not in the default dictionary", name)
		}
	}
}

func TestDefaultRules_Table(t *testing.T) {
	d := loadDefault(t)
	byName := map[string]*Rule{}
	for _, r := range d.Rules() {
		byName[r.Name] = r
	}
	for name, c := range defaultRuleCases {
		rule := byName[name]
		if rule == nil {
			continue
		}
		for lang, inputs := range map[string][]string{"ja": c.matchJA, "en": c.matchEN} {
			for _, in := range inputs {
				t.Run(name+"/match/"+lang, func(t *testing.T) {
					dec, ok := d.Decide(in)
					if !ok {
						t.Fatalf("no rule matched %q", in)
					}
					if dec.Matched != name || dec.Route != c.route || dec.Source != domain.SourceRule {
						t.Fatalf("%q: got rule %s route %s, want rule %s route %s", in, dec.Matched, dec.Route, name, c.route)
					}
					if len(dec.Evidence) != 1 || dec.Evidence[0] != rule.Evidence || dec.Confidence != rule.Confidence {
						t.Fatalf("%q: evidence %v confidence %g", in, dec.Evidence, dec.Confidence)
					}
				})
			}
		}
		for lang, inputs := range map[string][]string{"ja": c.noMatchJA, "en": c.noMatchEN} {
			for _, in := range inputs {
				t.Run(name+"/no-match/"+lang, func(t *testing.T) {
					if snippet, ok := rule.Match(in); ok {
						t.Fatalf("rule %s matched %q (at %q)", name, in, snippet)
					}
				})
			}
		}
	}
}

// The inputs the issue names route without any classifier, straight from the dictionary.
func TestDefaultRules_JapaneseExamples(t *testing.T) {
	d := loadDefault(t)
	for in, want := range map[string]domain.Route{
		"このログを集計して傾向を教えて":      domain.RouteAnalyze,
		"nginxを再起動して":          domain.RouteOps,
		"来週のリリースの段取りを組んで":      domain.RoutePlan,
		"OAuthの仕様を調べて":         domain.RouteResearch,
		"job_20260301_001 を承認": domain.RouteChat,
	} {
		dec, ok := d.Decide(in)
		if !ok || dec.Route != want {
			t.Errorf("%q: got %v (%v), want %s", in, dec.Route, ok, want)
		}
	}
}

func BenchmarkDecideRuleHit(b *testing.B) {
	d := loadDefault(b)
	inputs := []string{
		"このログを集計して傾向を教えて",
		"nginxを再起動して",
		"make a plan for the migration",
		"please approve job_20260301_001",
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := d.Decide(inputs[i%len(inputs)]); !ok {
			b.Fatal("no rule matched")
		}
	}
}

func BenchmarkDecideNoMatch(b *testing.B) {
	d := loadDefault(b)
	in := "今日はいい天気ですね。週末はどこかへ出かけたいな。"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, ok := d.Decide(in); ok {
			b.Fatal("unexpected match")
		}
	}
}
