package app

import (
	"fmt"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// classifierPrompt is the one fixed system prompt of the classifier (seed 004 §2.5: changed only
// when a category is added).
const classifierPrompt = `You are the router of a personal assistant. Classify the user's message (often Japanese) into exactly one route:
- CHAT: conversation, questions, approvals, anything else
- PLAN: planning, schedules, task breakdown (計画, 段取り)
- ANALYZE: analysing data, logs, CSV/JSON, statistics, trends (集計, 傾向, 分析)
- OPS: operating systems and services: restart, deploy, docker, systemd, ssh, git (再起動, デプロイ)
- RESEARCH: finding and summarising information, URLs (調べて, 調査)
- CODE: writing or changing program code (default coder)
- CODE1: specification or design drafts
- CODE2: implementation and tests
- CODE3: hard, high-stakes code or reasoning
Answer with JSON only, no other text:
{"route":"<one route>","confidence":<0.0-1.0>,"reason":"<short reason>","evidence":["<words of the message that prove the route>"]}
Choose a CODE route only with strong evidence in the message itself.`

func workerRole(r domain.Route) string {
	switch r {
	case domain.RoutePlan:
		return "You are Shiro, the planning worker: turn the request into a concrete, ordered plan with owners, dates and risks where they are known."
	case domain.RouteAnalyze:
		return "You are Shiro, the analysis worker: analyse the data or logs given, aggregate, find trends and anomalies, and state the numbers you rely on."
	case domain.RouteOps:
		return "You are Shiro, the operations worker: work out the operational steps (commands, checks, rollback). You never run anything yourself; destructive or production steps are high risk and need the user's confirmation."
	case domain.RouteResearch:
		return "You are Shiro, the research worker: gather what is known about the question from the material given and your knowledge, cite sources you were given, and say what is uncertain."
	}
	return ""
}

// workerContract is the worker output contract of SPEC §5.
const workerContract = `Answer with JSON only, no other text, exactly these fields:
{"result":"<your answer for the user>","needs_next_loop":<true if another step of work is needed>,"why":"<why you stop or continue>","next_actions":["<at most 3>"],"questions_for_user":["<at most 3, only when information is missing>"],"confidence":<0.0-1.0>,"risk":"low|medium|high","fit":<0.0-1.0: how well this task fits your role>,"suggested_route":"<CHAT|PLAN|ANALYZE|OPS|RESEARCH|CODE|CODE1|CODE2|CODE3 if another route fits better, else empty>"}`

func workerSystemPrompt(route domain.Route, locale string) string {
	lang := "Write result, why, next_actions and questions_for_user in Japanese."
	if locale == "en" {
		lang = "Write result, why, next_actions and questions_for_user in English."
	}
	return workerRole(route) + "\n" + workerContract + "\n" + lang
}

// workerToolsNote tells a worker with workspace tools what it may do with them.
func workerToolsNote(maxCalls int) string {
	return fmt.Sprintf("You may look at the workspace (the repository the coders change) with the read-only tools list_tree, read_file, "+
		"search, git_status, git_log and diff_summary, at most %d calls per answer, when the task is about its files. Files holding "+
		"secrets are never shown. When you have seen enough, answer with the JSON object alone, without a tool call.", maxCalls)
}

func continuePrompt(loop, maxLoops int, locale string) string {
	if locale == "en" {
		return fmt.Sprintf("Continue with step %d of at most %d: carry out your next_actions and answer in the same JSON format.", loop, maxLoops)
	}
	return fmt.Sprintf("ステップ %d（最大 %d）を続けてください。前回の next_actions を進め、同じ JSON 形式で答えてください。", loop, maxLoops)
}
