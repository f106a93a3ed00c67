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
}

// SimulateResponse is what the policy would decide, the deciding rule and the facts.
type SimulateResponse struct {
	Outcome    domain.Outcome `json:"outcome"`
	Rule       string         `json:"rule"`
	Reason     string         `json:"reason"`
	Hits       []domain.Hit   `json:"hits"`
	GrantID    string         `json:"grant_id,omitempty"`
	PolicyHash string         `json:"policy_hash,omitempty"`
	Facts      map[string]any `json:"facts,omitempty"`
}

// ViewSimulation renders a simulation (the CLI prints the same shape offline).
func ViewSimulation(sim app.Simulation) SimulateResponse {
	hits := sim.Decision.Hits
	if hits == nil {
		hits = []domain.Hit{}
	}
	return SimulateResponse{Outcome: sim.Decision.Outcome, Rule: sim.Decision.Rule, Reason: sim.Decision.Reason, Hits: hits,
		GrantID: sim.Decision.GrantID, PolicyHash: sim.Decision.PolicyHash, Facts: sim.Facts}
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
	writeJSON(w, http.StatusOK, ViewSimulation(sim))
}

// maxSimulateBody caps a simulated patch like a proposal.
const maxSimulateBody = 1 << 20
