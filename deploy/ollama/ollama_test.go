package ollama

import (
	"reflect"
	"testing"
)

func TestModelfiles(t *testing.T) {
	if got := Models(); !reflect.DeepEqual(got, []string{"chat-v1:latest", "worker-v1:latest"}) {
		t.Fatalf("models = %v", got)
	}
	for _, name := range []string{"chat-v1", "chat-v1:latest", "worker-v1:latest"} {
		if text, ok := Modelfile(name); !ok || text == "" {
			t.Errorf("%s: no Modelfile", name)
		}
	}
	for _, name := range []string{"chat-v1:7b", "qwen2.5:3b", "../go.mod"} {
		if _, ok := Modelfile(name); ok {
			t.Errorf("%s: a Modelfile", name)
		}
	}
}
