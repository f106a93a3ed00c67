package domain

import "testing"

func BenchmarkParseProposal(b *testing.B) {
	answer := "```json\n" + `{"job_id":"job_20261121_001","plan":"README に使い方を追記する","patch":"[{\"type\":\"file_edit\",\"action\":\"update\",\"target\":\"README.md\",\"content\":\"# Usage\\n\"},{\"type\":\"shell_command\",\"action\":\"run\",\"target\":\"go test ./...\"}]","risk":{"level":"low","destructive":false,"compatibility_issues":[],"rollback_possible":true,"notes":""},"cost_hint":{"estimated_tokens":0,"estimated_cost_usd":0,"near_limit":false},"need_approval":true,"uses_browser":false,"task_type":"docs"}` + "\n```"
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := ParseProposal(answer, ParsePatch); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}
