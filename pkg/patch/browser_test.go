package patch

import (
	"reflect"
	"testing"
)

func TestBrowserActions(t *testing.T) {
	tests := []struct {
		name, text string
		want       Operation
	}{
		{"navigate", `[{"type":"browser","action":"chrome_navigate","target":" https://example.com/a "}]`,
			Operation{Action: ActionChromeNavigate, Target: "https://example.com/a"}},
		{"click by selector", `[{"type":"browser","action":"chrome_click_element","target":"#ok","metadata":{"waitForNavigation":"true"}}]`,
			Operation{Action: ActionChromeClickElement, Target: "#ok", Metadata: map[string]string{"waitForNavigation": "true"}}},
		{"click by coordinates", `[{"type":"browser","action":"chrome_click_element","metadata":{"x":"10","y":"20"}}]`,
			Operation{Action: ActionChromeClickElement, Metadata: map[string]string{"x": "10", "y": "20"}}},
		{"old click name kept as written", `[{"type":"browser","action":"Chrome_Click","target":"#ok"}]`,
			Operation{Action: ActionChromeClick, Target: "#ok"}},
		{"fill value from metadata", `[{"type":"browser","action":"chrome_fill_or_select","target":"#q","metadata":{"value":"tea"}}]`,
			Operation{Action: ActionChromeFillOrSelect, Target: "#q", Content: "tea"}},
		{"fill value as content", `[{"type":"browser","action":"chrome_fill_or_select","target":"#q","content":"tea"}]`,
			Operation{Action: ActionChromeFillOrSelect, Target: "#q", Content: "tea"}},
		{"get content of the page", `[{"type":"browser","action":"chrome_get_web_content"}]`,
			Operation{Action: ActionChromeGetWebContent}},
		{"old get_text name", `[{"type":"browser","action":"chrome_get_text","target":"h1"}]`,
			Operation{Action: ActionChromeGetText, Target: "h1"}},
		{"screenshot", `[{"type":"browser","action":"chrome_screenshot","metadata":{"fullPage":"true"}}]`,
			Operation{Action: ActionChromeScreenshot, Metadata: map[string]string{"fullPage": "true"}}},
		{"keyboard keys from metadata", `[{"type":"browser","action":"chrome_keyboard","target":"#q","metadata":{"keys":"Enter","delay":"50"}}]`,
			Operation{Action: ActionChromeKeyboard, Target: "#q", Content: "Enter", Metadata: map[string]string{"delay": "50"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.text, Options{})
			if err != nil {
				t.Fatal(err)
			}
			op := p.Operations[0]
			got := Operation{Action: op.Action, Target: op.Target, Content: op.Content, Metadata: op.Metadata}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("op = %+v, want %+v", got, tt.want)
			}
			if !reflect.DeepEqual(op.Flags, []Flag{FlagBrowser}) || !p.HasFlag(FlagBrowser) {
				t.Fatalf("flags = %v", op.Flags)
			}
		})
	}
}

func TestCanonicalBrowserAction(t *testing.T) {
	for in, want := range map[string]string{
		ActionChromeClick: ActionChromeClickElement, ActionChromeGetText: ActionChromeGetWebContent,
		ActionChromeNavigate: ActionChromeNavigate, ActionChromeKeyboard: ActionChromeKeyboard,
	} {
		if got := CanonicalBrowserAction(in); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
}

// An alias and the bridge name are different operations for the approval binding: a patch is
// hashed as written, so a proposal approved before the rename still executes.
func TestBrowserAliasKeepsItsHash(t *testing.T) {
	a, err := Parse(`[{"type":"browser","action":"chrome_click","target":"#b"}]`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(`[{"type":"browser","action":"chrome_click_element","target":"#b"}]`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash == b.Hash {
		t.Fatal("alias and bridge name hash alike")
	}
}
