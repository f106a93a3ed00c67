package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// SimulateRequest is the body of POST /v1/policy/simulate.
type SimulateRequest struct {
	Patch            string  `json:"patch"`
	Route            string  `json:"route,omitempty"`
	TaskType         string  `json:"task_type,omitempty"`
	Requester        string  `json:"requester,omitempty"`
	EstimatedCostUSD float64 `json:"estimated_cost_usd,omitempty"`
	EstimatedTokens  int64   `json:"estimated_tokens,omitempty"`
	UsesBrowser      bool    `json:"uses_browser,omitempty"`
	// Locale is the language of the answer's texts (reason_text, the hits' text): ja (the
	// default) or en; a request to the REST API may give it as ?locale= instead.
	Locale string `json:"locale,omitempty"`
}

// SimulateResponse is what the policy would decide, the deciding rule and the facts. Reason is
// the decision's reason in English (as the audit log would record it), ReasonText the same in
// the requested locale, ReasonCode and ReasonArgs its code when a built-in rule decided.
type SimulateResponse struct {
	Outcome    domain.Outcome `json:"outcome"`
	Rule       string         `json:"rule"`
	Reason     string         `json:"reason"`
	ReasonText string         `json:"reason_text"`
	ReasonCode string         `json:"reason_code,omitempty"`
	ReasonArgs []string       `json:"reason_args,omitempty"`
	Hits       []SimulatedHit `json:"hits"`
	GrantID    string         `json:"grant_id,omitempty"`
	PolicyHash string         `json:"policy_hash,omitempty"`
	Facts      map[string]any `json:"facts,omitempty"`
}

// SimulatedHit is a requirement's hit with what the approval request would say of it (Text, in
// the requested locale).
type SimulatedHit struct {
	domain.Hit
	Text string `json:"text"`
}

// ViewSimulation renders a simulation, its texts in locale (the CLI prints the same shape
// offline).
func ViewSimulation(sim app.Simulation, locale string) SimulateResponse {
	d := sim.Decision
	hits := make([]SimulatedHit, len(d.Hits))
	for i, h := range d.Hits {
		hits[i] = SimulatedHit{Hit: h, Text: h.TextIn(locale)}
	}
	return SimulateResponse{Outcome: d.Outcome, Rule: d.Rule, Reason: d.Reason, ReasonText: d.ReasonIn(locale),
		ReasonCode: d.ReasonCode, ReasonArgs: d.ReasonArgs, Hits: hits, GrantID: d.GrantID, PolicyHash: d.PolicyHash, Facts: sim.Facts}
}

// Input is the request as the use case takes it.
func (b SimulateRequest) Input() app.RequestInput {
	return app.RequestInput{Patch: b.Patch, Route: b.Route, TaskType: b.TaskType, RequestedBy: domain.Actor{ID: b.Requester},
		Cost: domain.CostHint{EstimatedCostUSD: b.EstimatedCostUSD, EstimatedTokens: b.EstimatedTokens}, UsesBrowser: b.UsesBrowser}
}

// simulatePolicy answers what the policy would decide for a patch now, without creating a job.
func (a *API) simulatePolicy(w http.ResponseWriter, r *http.Request) {
	var body SimulateRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSimulateBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		bodyError(w, r, err)
		return
	}
	if body.Patch == "" {
		writeError(w, r, http.StatusBadRequest, "invalid_argument", TextPatchRequired)
		return
	}
	sim, err := a.svc.SimulatePolicy(r.Context(), body.Input())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	locale := body.Locale
	if locale == "" {
		locale = viewLocale(r)
	}
	writeJSON(w, http.StatusOK, ViewSimulation(sim, locale))
}

// maxSimulateBody caps a simulated patch like a proposal.
const maxSimulateBody = 1 << 20
