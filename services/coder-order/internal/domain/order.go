package domain

import (
	"fmt"
	"strings"
)

// Order ids.
const (
	Order1 = "order1"
	Order2 = "order2"
	Order3 = "order3"
)

// Orders lists the order ids in their fixed order.
var Orders = [...]string{Order1, Order2, Order3}

// NormalizeOrder accepts order1..3, the legacy coder1..3, CODE1..3 route names and the aliases
// Aka/Ao/Gin, case-insensitively; "" and "code" mean def.
func NormalizeOrder(name, def string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", "code":
		n = strings.ToLower(def)
	}
	switch n {
	case "order1", "coder1", "code1", "aka":
		return Order1, nil
	case "order2", "coder2", "code2", "ao":
		return Order2, nil
	case "order3", "coder3", "code3", "gin":
		return Order3, nil
	}
	return "", fmt.Errorf("%w: %q (want order1, order2 or order3)", ErrUnknownOrder, name)
}

// Role is the persona and brief of an order.
type Role struct {
	Alias string
	Brief string
}

// Roles are the fixed roles of SPEC §1.
var Roles = map[string]Role{
	Order1: {Alias: "Aka", Brief: "You are Aka (order1), the cheap proposal writer. You draft specifications, designs and small, low-risk changes. Keep plans short and patches minimal; prefer docs and design notes over broad code changes."},
	Order2: {Alias: "Ao", Brief: "You are Ao (order2), the implementation proposal writer. You turn a task into a concrete, working change: a clear plan and a complete patch that applies cleanly, with tests where they belong."},
	Order3: {Alias: "Gin", Brief: "You are Gin (order3), the reviewer for high-stakes work. Reason carefully about correctness, security, data loss and compatibility; state every risk and how to roll back. Your proposals are always approval-gated."},
}
