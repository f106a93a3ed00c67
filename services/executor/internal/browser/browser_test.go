package browser

import (
	"errors"
	"reflect"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

func TestArgs(t *testing.T) {
	op := func(action, target, content string) patch.Operation {
		return patch.Operation{Type: patch.TypeBrowser, Action: action, Target: target, Content: content}
	}
	tests := []struct {
		op   patch.Operation
		want map[string]any
		err  error
	}{
		{op("chrome_navigate", "https://example.com", ""), map[string]any{"url": "https://example.com"}, nil},
		{op("chrome_navigate", "", ""), nil, domain.ErrInvalid},
		{op("chrome_click", "#ok", ""), map[string]any{"selector": "#ok"}, nil},
		{op("chrome_click", "", ""), nil, domain.ErrInvalid},
		{op("chrome_get_text", "", ""), map[string]any{}, nil},
		{op("chrome_screenshot", "main", ""), map[string]any{"selector": "main"}, nil},
		{op("chrome_execute_script", "", "return 1"), map[string]any{"script": "return 1"}, nil},
		{op("chrome_execute_script", "", ""), nil, domain.ErrInvalid},
		{op("chrome_download", "x", ""), nil, domain.ErrInvalid},
	}
	for _, tt := range tests {
		got, err := Args(tt.op)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("%s: err = %v", tt.op.Action, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v %v, want %v", tt.op.Action, got, err, tt.want)
		}
	}
}
