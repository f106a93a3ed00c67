package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// OfflineLabel starts every offline answer (in JSON answers: the reason, result or plan) so
// nobody mistakes it for a model's work.
const OfflineLabel = "[オフライン応答: モデルではありません / offline answer, not a model]"

// Offline is the deterministic provider used when no model is reachable and in tests. It never
// pretends to be a model: every answer carries OfflineLabel. For JSON requests it answers the
// contract named by Request.Contract, or, when that is empty, the one DetectContract finds in
// the system prompt.
type Offline struct{}

var _ Client = Offline{}

// NewOffline returns the offline provider.
func NewOffline() Offline { return Offline{} }

// Provider implements Client.
func (Offline) Provider() string { return ProviderOffline }

// Model implements Client.
func (Offline) Model() string { return "offline" }

// Cloud implements Client.
func (Offline) Cloud() bool { return false }

// DetectContract infers the contract from the system messages: "needs_next_loop" means the
// worker contract, "cost_hint" or "patch" with "plan" means the proposal contract, "route"
// with "confidence" means the classifier contract.
func DetectContract(msgs []Message) Contract {
	var sys strings.Builder
	for _, m := range msgs {
		if m.Role == RoleSystem {
			sys.WriteString(m.Content)
			sys.WriteByte('\n')
		}
	}
	s := sys.String()
	switch {
	case strings.Contains(s, "needs_next_loop"):
		return ContractWorker
	case strings.Contains(s, "cost_hint") || (strings.Contains(s, "patch") && strings.Contains(s, "plan")):
		return ContractProposal
	case strings.Contains(s, "route") && strings.Contains(s, "confidence"):
		return ContractClassifier
	}
	return ContractText
}

// Chat implements Client.
func (o Offline) Chat(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	input := lastUser(req.Messages)
	contract := req.Contract
	if contract == ContractText && req.JSON {
		contract = DetectContract(req.Messages)
	}
	var text string
	switch contract {
	case ContractClassifier:
		text = mustJSON(offlineClassify(input))
	case ContractWorker:
		text = mustJSON(offlineWorker(input))
	case ContractProposal:
		text = mustJSON(offlineProposal(req.Messages, input))
	default:
		if req.JSON {
			text = mustJSON(map[string]string{"result": OfflineLabel + " " + summary(input, 200)})
		} else {
			text = OfflineLabel + "\n" + "受け取った内容 / received: " + summary(input, 200)
		}
	}
	return &Response{
		Text:     text,
		Usage:    Usage{InputTokens: EstimateTokens(req.Messages), OutputTokens: EstimateText(text)},
		Latency:  time.Since(start),
		Provider: ProviderOffline,
		Model:    "offline",
		Attempts: 1,
		Offline:  true,
	}, nil
}

func lastUser(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

func summary(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only plain maps and structs of strings/numbers reach here; this cannot fail, but a
		// JSON error object keeps the contract shape if it ever does.
		return `{"error":"offline encode failed"}`
	}
	return string(b)
}

type offlineRule struct {
	route string
	conf  float64
	re    *regexp.Regexp
}

// offlineRules are keyword heuristics; confidences stay just above the routing thresholds so
// the decision is usable but visibly not a model's.
var offlineRules = []offlineRule{
	{"CODE", 0.8, regexp.MustCompile("(?i)(```|^diff --git|^@@ |\\.go\\b|\\.py\\b|\\.ts\\b|func |コード|実装|バグ|修正)")},
	{"OPS", 0.65, regexp.MustCompile(`(?i)(systemctl|docker|ssh|deploy|restart|デプロイ|再起動)`)},
	{"ANALYZE", 0.65, regexp.MustCompile(`(?i)(csv|集計|傾向|分析|analy[sz]e)`)},
	{"RESEARCH", 0.65, regexp.MustCompile(`(?i)(https?://|調べて|research|検索)`)},
	{"PLAN", 0.65, regexp.MustCompile(`(?i)(計画|段取り|\bplan\b)`)},
}

func offlineClassify(input string) map[string]any {
	for _, r := range offlineRules {
		if m := r.re.FindString(input); m != "" {
			return map[string]any{
				"route":      r.route,
				"confidence": r.conf,
				"reason":     OfflineLabel + " keyword match",
				"evidence":   []string{strings.TrimSpace(m)},
			}
		}
	}
	return map[string]any{"route": "CHAT", "confidence": 0.5, "reason": OfflineLabel + " no keyword matched", "evidence": []string{}}
}

func offlineWorker(input string) map[string]any {
	return map[string]any{
		"result":             OfflineLabel + " 受け取った依頼 / request: " + summary(input, 300),
		"needs_next_loop":    false,
		"why":                "offline provider: no model is available, the request is echoed without reasoning",
		"next_actions":       []string{},
		"questions_for_user": []string{},
		"confidence":         0.5,
		"risk":               "low",
		"fit":                1.0,
	}
}

var jobIDInText = regexp.MustCompile(`job_[0-9]{8}_(?:[0-9]{3,}|[0-9a-f]{8})`)

// offlineProposal writes a docs-only proposal: one new Markdown file recording the task, which
// every patch format parser accepts and which is trivially reversible.
func offlineProposal(msgs []Message, input string) map[string]any {
	var all strings.Builder
	for _, m := range msgs {
		all.WriteString(m.Content)
	}
	sum := sha256.Sum256([]byte(input))
	target := "docs/offline/" + hex.EncodeToString(sum[:4]) + ".md"
	content := "# " + summary(input, 60) + "\n\n" + OfflineLabel + "\n\n" + strings.TrimSpace(input) + "\n"
	patch := []map[string]any{{
		"type": "file_edit", "action": "create", "target": target, "content": content,
		"metadata": map[string]string{"source": "offline"},
	}}
	patchText := mustJSON(patch)
	return map[string]any{
		"job_id": jobIDInText.FindString(all.String()),
		"plan":   OfflineLabel + " " + fmt.Sprintf("タスクを %s に記録します / record the task in %s", target, target),
		"patch":  patchText,
		"risk": map[string]any{
			"level": "low", "destructive": false, "compatibility_issues": []string{},
			"rollback_possible": true, "notes": "offline provider: no model was consulted",
		},
		"cost_hint":     map[string]any{"estimated_tokens": 0, "estimated_cost_usd": 0, "near_limit": false},
		"need_approval": true,
		"uses_browser":  false,
		"task_type":     "docs",
	}
}
