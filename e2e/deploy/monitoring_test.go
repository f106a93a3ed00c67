package deploy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The Grafana dashboard under deploy/monitoring is a dashboard Grafana imports: valid JSON, a
// Prometheus datasource variable every query uses, unique panel ids, panels inside the
// 24-column grid without overlapping, and a PromQL query on every graph. (That its metrics are
// served is checked against the running services by e2e/conventions_test.go; the alert rules by
// promtool in make monitoring-check.)
func TestGrafanaDashboardImports(t *testing.T) {
	b, err := os.ReadFile("../../deploy/monitoring/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		Expr       string `json:"expr"`
		Datasource struct {
			Type string `json:"type"`
			UID  string `json:"uid"`
		} `json:"datasource"`
	}
	var d struct {
		UID        string `json:"uid"`
		Title      string `json:"title"`
		Templating struct {
			List []struct{ Name, Type, Query string } `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int      `json:"id"`
			Type    string   `json:"type"`
			Title   string   `json:"title"`
			Targets []target `json:"targets"`
			Grid    struct {
				X, Y, W, H int
			} `json:"gridPos"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" || len(d.Templating.List) != 1 || d.Templating.List[0].Type != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Fatalf("dashboard uid %q title %q templating %+v", d.UID, d.Title, d.Templating.List)
	}
	ids := map[int]bool{}
	taken := map[[2]int]string{}
	for _, p := range d.Panels {
		if p.ID == 0 || ids[p.ID] {
			t.Errorf("panel %q: id %d missing or repeated", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Grid.W <= 0 || p.Grid.H <= 0 || p.Grid.X < 0 || p.Grid.X+p.Grid.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.Grid)
		}
		for x := p.Grid.X; x < p.Grid.X+p.Grid.W; x++ {
			for y := p.Grid.Y; y < p.Grid.Y+p.Grid.H; y++ {
				if other, ok := taken[[2]int{x, y}]; ok {
					t.Fatalf("panels %q and %q overlap at %d,%d", other, p.Title, x, y)
				}
				taken[[2]int{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" || tg.Datasource.Type != "prometheus" || tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: query %+v", p.Title, tg)
			}
			if strings.Count(tg.Expr, "(") != strings.Count(tg.Expr, ")") {
				t.Errorf("panel %q: unbalanced query %q", p.Title, tg.Expr)
			}
		}
	}
}
