// Package domain holds router-shiro's rules: routes, decisions, the classifier and worker
// contracts, loop control and the deliberation comparison. It does no I/O.
package domain

import (
	"errors"
	"strings"
)

// Route is where a task goes (SPEC §4).
type Route string

const (
	RouteUnspecified Route = ""
	RouteChat        Route = "CHAT"
	RoutePlan        Route = "PLAN"
	RouteAnalyze     Route = "ANALYZE"
	RouteOps         Route = "OPS"
	RouteResearch    Route = "RESEARCH"
	RouteCode        Route = "CODE"
	RouteCode1       Route = "CODE1"
	RouteCode2       Route = "CODE2"
	RouteCode3       Route = "CODE3"
)

// Routes lists every valid route in a stable order.
func Routes() []Route {
	return []Route{RouteChat, RoutePlan, RouteAnalyze, RouteOps, RouteResearch, RouteCode, RouteCode1, RouteCode2, RouteCode3}
}

// ParseRoute accepts a route name case-insensitively with surrounding whitespace.
func ParseRoute(s string) (Route, error) {
	r := Route(strings.ToUpper(strings.TrimSpace(s)))
	if !r.Valid() {
		return RouteUnspecified, errors.Join(ErrInvalid, errors.New("unknown route "+quote(s)))
	}
	return r, nil
}

// Valid reports whether r is one of the nine routes.
func (r Route) Valid() bool {
	switch r {
	case RouteChat, RoutePlan, RouteAnalyze, RouteOps, RouteResearch, RouteCode, RouteCode1, RouteCode2, RouteCode3:
		return true
	}
	return false
}

// IsCode reports whether the route is served by a cloud coder (CODE, CODE1..3).
func (r Route) IsCode() bool {
	return r == RouteCode || r == RouteCode1 || r == RouteCode2 || r == RouteCode3
}

// IsWorker reports whether the route runs on the worker model under loop control.
func (r Route) IsWorker() bool {
	return r == RoutePlan || r == RouteAnalyze || r == RouteOps || r == RouteResearch
}

// Order returns the coder order a CODE route asks; CODE maps to defaultOrder.
func (r Route) Order(defaultOrder string) string {
	switch r {
	case RouteCode1:
		return "order1"
	case RouteCode2:
		return "order2"
	case RouteCode3:
		return "order3"
	case RouteCode:
		return defaultOrder
	}
	return ""
}

// NormalizeOrder maps the legacy names coder1..3 to order1..3 and rejects anything else.
func NormalizeOrder(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "order1", "coder1":
		return "order1", true
	case "order2", "coder2":
		return "order2", true
	case "order3", "coder3":
		return "order3", true
	}
	return "", false
}

func quote(s string) string { return `"` + s + `"` }
