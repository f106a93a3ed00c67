package inbox

import "encoding/json"

// SealOf is the meta and the seal Append stores with ev, for tests that forge entries.
func SealOf(cfg Config, ev Event) (meta, mac string) {
	m, _ := json.Marshal(ev.Meta)
	return string(m), cfg.mac(ev.ID, ev.Key, ev.Payload, m)
}
