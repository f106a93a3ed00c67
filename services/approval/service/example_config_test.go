package service_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/services/approval/service"
)

// The example file shows every default of the approval section.
func TestExampleConfigMatchesDefaults(t *testing.T) {
	data, err := os.ReadFile("../../../config/picoclaw.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := service.DefaultConfig()
	if err := config.Decode(data, &got); err != nil {
		t.Fatal(err)
	}
	want := service.DefaultConfig()
	// %+v prints nil and empty lists alike, which YAML does not distinguish either.
	if fmt.Sprintf("%+v", got.Approval) != fmt.Sprintf("%+v", want.Approval) {
		t.Errorf("example approval section differs from the defaults:\nexample  %+v\ndefaults %+v", got.Approval, want.Approval)
	}
}
