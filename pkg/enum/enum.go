// Package enum maps a service's own enumerations to the generated proto enums and back: one
// table per enumeration instead of a switch in each direction.
package enum

import "maps"

// Map is a two-way table between domain values and wire values. A value the table does not
// hold maps to the zero value of the other side: a proto enum's UNSPECIFIED, a domain
// string's "".
type Map[D, W comparable] struct {
	wire   map[D]W
	domain map[W]D
}

// New builds a Map from the domain → wire pairs; the wire values must be distinct.
func New[D, W comparable](pairs map[D]W) Map[D, W] {
	m := Map[D, W]{wire: maps.Clone(pairs), domain: make(map[W]D, len(pairs))}
	for d, w := range pairs {
		m.domain[w] = d
	}
	return m
}

// Wire returns d's wire value (zero when the table does not hold d).
func (m Map[D, W]) Wire(d D) W { return m.wire[d] }

// Domain returns w's domain value (zero when the table does not hold w).
func (m Map[D, W]) Domain(w W) D { return m.domain[w] }

// Lookup returns w's domain value and whether the table holds w.
func (m Map[D, W]) Lookup(w W) (D, bool) {
	d, ok := m.domain[w]
	return d, ok
}
