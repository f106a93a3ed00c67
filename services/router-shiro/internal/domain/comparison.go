package domain

import (
	"fmt"
	"sort"
	"strings"
)

// ComparedProposal is one row of the deliberation comparison.
type ComparedProposal struct {
	// Number is 1-based, the n of /pick <job_id> <n>.
	Number           int
	Order            string
	AffectedPaths    []string
	Operations       int
	Risk             Risk
	Destructive      bool
	RollbackPossible bool
	UsesBrowser      bool
	EstimatedCostUSD float64
	EstimatedTokens  int64
	NearLimit        bool
	PlanSummary      string
	// PatchError is set when the patch does not parse (approval would refuse it).
	PatchError   string
	ErrorCode    string
	ErrorMessage string
}

// Comparison is the worker's comparison of deliberation proposals (SPEC §7).
type Comparison struct {
	Entries []ComparedProposal
	// OverlappingPaths are touched by more than one proposal.
	OverlappingPaths []string
	// Recommended is the 1-based number of the proposal with the lowest risk, then the fewest
	// destructive effects, then the lowest cost; 0 when every order failed.
	Recommended int
	Summary     string
}

const planSummaryRunes = 160

// Compare builds the comparison of the results, in the order coder-order returned them.
func Compare(results []ProposalResult, locale string) Comparison {
	var c Comparison
	pathCount := map[string]int{}
	for i, r := range results {
		e := ComparedProposal{Number: i + 1, Order: r.Order, ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage}
		if r.Proposal != nil && r.ErrorCode == "" {
			p := r.Proposal
			sum := SummarizePatch(p.Patch)
			e.AffectedPaths = sum.AffectedPaths
			e.Operations = sum.Operations
			e.PatchError = sum.Error
			e.Risk = p.Risk.Level
			// The coder's own flags are not trusted alone: what the patch does counts too.
			e.Destructive = p.Risk.Destructive || sum.Destructive
			e.RollbackPossible = p.Risk.RollbackPossible
			e.UsesBrowser = p.UsesBrowser || sum.UsesBrowser
			e.EstimatedCostUSD = p.Cost.EstimatedCostUSD
			e.EstimatedTokens = p.Cost.EstimatedTokens
			e.NearLimit = p.Cost.NearLimit
			e.PlanSummary = truncateRunes(firstLine(p.Plan), planSummaryRunes)
			if e.Order == "" {
				e.Order = p.Order
			}
			for _, path := range e.AffectedPaths {
				pathCount[path]++
			}
		} else if e.ErrorCode == "" {
			e.ErrorCode = "no_proposal"
		}
		c.Entries = append(c.Entries, e)
	}
	for path, n := range pathCount {
		if n > 1 {
			c.OverlappingPaths = append(c.OverlappingPaths, path)
		}
	}
	sort.Strings(c.OverlappingPaths)
	c.Recommended = recommend(c.Entries)
	c.Summary = summarize(c, locale)
	return c
}

func riskRank(r Risk) int {
	switch r {
	case RiskLow:
		return 0
	case RiskMedium:
		return 1
	case RiskHigh:
		return 3
	}
	return 2 // unknown risk ranks between medium and high
}

func recommend(entries []ComparedProposal) int {
	best := -1
	better := func(a, b ComparedProposal) bool {
		if ra, rb := riskRank(a.Risk), riskRank(b.Risk); ra != rb {
			return ra < rb
		}
		if a.Destructive != b.Destructive {
			return !a.Destructive
		}
		if a.RollbackPossible != b.RollbackPossible {
			return a.RollbackPossible
		}
		return a.EstimatedCostUSD < b.EstimatedCostUSD
	}
	for i, e := range entries {
		if e.ErrorCode != "" || e.PatchError != "" {
			continue
		}
		if best < 0 || better(e, entries[best]) {
			best = i
		}
	}
	return best + 1
}

func summarize(c Comparison, locale string) string {
	ok := 0
	for _, e := range c.Entries {
		if e.ErrorCode == "" {
			ok++
		}
	}
	w := summaryJa
	if locale == "en" {
		w = summaryEn
	}
	var b strings.Builder
	fmt.Fprintf(&b, w.received, ok, len(c.Entries))
	if len(c.OverlappingPaths) > 0 {
		fmt.Fprintf(&b, w.overlapping, strings.Join(c.OverlappingPaths, ", "))
	}
	if c.Recommended > 0 {
		e := c.Entries[c.Recommended-1]
		fmt.Fprintf(&b, w.recommended, e.Number, e.Order, riskText(e.Risk, locale), e.EstimatedCostUSD)
	}
	return b.String()
}

// summaryWording is a summary's wording in one locale: received takes the proposals received and
// asked for, overlapping the shared paths, recommended number, order, risk and cost.
type summaryWording struct{ received, overlapping, recommended string }

var (
	summaryEn = summaryWording{
		received:    "%d of %d proposals received.",
		overlapping: " Files changed by more than one proposal: %s.",
		recommended: " Recommended: #%d (%s, risk %s, $%.4f).",
	}
	summaryJa = summaryWording{
		received:    "%[2]d 件中 %[1]d 件の提案を受け取りました。",
		overlapping: "複数の提案が変更するファイル: %s。",
		recommended: "おすすめ: #%d（%s、リスク %s、$%.4f）。",
	}
)

func riskText(r Risk, locale string) string {
	if r != "" {
		return string(r)
	}
	if locale == "en" {
		return "unknown"
	}
	return "不明"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
