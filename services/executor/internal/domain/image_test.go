package domain

import "testing"

// TestAddImage: PNG and JPEG screenshots are carried back while the result's images stay within
// their count and their bytes together; anything else is left to its artifact.
func TestAddImage(t *testing.T) {
	var r Result
	small := make([]byte, 100<<10)
	for i, tc := range []struct {
		img  Image
		want bool
	}{
		{Image{MIMEType: "image/png", Data: small}, true},
		{Image{MIMEType: "image/webp", Data: small}, false},
		{Image{MIMEType: "image/jpeg"}, false},
		{Image{MIMEType: "image/jpeg", Data: make([]byte, MaxResultImageBytes)}, false}, // over the total
		{Image{MIMEType: "image/jpeg", Data: small}, true},
		{Image{MIMEType: "image/png", Data: small}, true},
		{Image{MIMEType: "image/png", Data: small}, true},
		{Image{MIMEType: "image/png", Data: small}, false}, // a fifth
	} {
		if got := r.AddImage(tc.img); got != tc.want {
			t.Errorf("image %d: added %v, want %v", i, got, tc.want)
		}
	}
	if len(r.Images) != MaxResultImages {
		t.Fatalf("%d images", len(r.Images))
	}
}
