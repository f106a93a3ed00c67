package domain

// Proposal is the coder output contract (SPEC §6), as received from coder-order.
type Proposal struct {
	JobID        string
	Plan         string
	Patch        string
	Risk         ProposalRisk
	Cost         CostHint
	NeedApproval bool
	UsesBrowser  bool
	// TaskType is design, codegen, review, refactor, ops or docs.
	TaskType      string
	Order         string
	Provider      string
	Model         string
	InputTokens   int64
	OutputTokens  int64
	LatencyMillis int64
}

// ProposalRisk is the coder's own risk assessment.
type ProposalRisk struct {
	// Level is low, medium, high or "" when the coder did not say.
	Level               Risk
	Destructive         bool
	CompatibilityIssues []string
	RollbackPossible    bool
	Notes               string
}

// CostHint is the coder's cost estimate.
type CostHint struct {
	EstimatedTokens  int64
	EstimatedCostUSD float64
	NearLimit        bool
}

// ProposalResult is one order's answer: a proposal or an error with a stable code.
type ProposalResult struct {
	Order        string
	Proposal     *Proposal
	ErrorCode    string
	ErrorMessage string
	// Estimate is set with ErrorCode cost_over_limit: what the call would cost.
	Estimate *CostHint
}
