package chatlink

import (
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
)

// Image limits: what a reply may carry (the outbox stores it whole before sending). The bytes
// of all images of a reply stay within MaxImageBytes so a pushed result fits the services'
// 1 MiB request cap with its text; that is also within LINE's 1 MB preview image limit, so one
// address serves both of an image message's URLs.
const (
	MaxImageBytes = 768 << 10
	// MaxImages is the most images one reply carries.
	MaxImages = 4
)

// ApprovalCard is an approval request laid out as a card (see picoclaw.common.v1.ApprovalCard):
// every string is fit to show; each channel escapes it for its own markup.
type ApprovalCard struct {
	JobID      string       `json:"job_id"`
	Title      string       `json:"title"`
	Risk       string       `json:"risk,omitempty"`
	RiskText   string       `json:"risk_text,omitempty"`
	Summary    []string     `json:"summary,omitempty"`
	Files      []FileChange `json:"files,omitempty"`
	Facts      []string     `json:"facts,omitempty"`
	ConsoleURL string       `json:"console_url,omitempty"`
	Locale     string       `json:"locale,omitempty"`
}

// FileChange is one changed file of a card: its path, a note when the change is not a diff,
// the changed lines (each starting with + or -) and a closing line when lines were cut.
type FileChange struct {
	Path  string   `json:"path"`
	Note  string   `json:"note,omitempty"`
	Lines []string `json:"lines,omitempty"`
	More  string   `json:"more,omitempty"`
}

// Image is a picture for the user (a browser job's screenshot).
type Image struct {
	ContentType string `json:"content_type"`
	Data        []byte `json:"data"`
	// Artifact is where the job keeps it, named when a channel cannot show the image.
	Artifact string `json:"artifact,omitempty"`
	Caption  string `json:"caption,omitempty"`
}

// ImageTypeOK reports whether a channel can show an image of this type.
func ImageTypeOK(contentType string) bool {
	return contentType == "image/png" || contentType == "image/jpeg"
}

func cardFromProto(c *commonv1.ApprovalCard) *ApprovalCard {
	if c == nil || c.GetJobId() == "" {
		return nil
	}
	out := &ApprovalCard{JobID: c.GetJobId(), Title: c.GetTitle(), Risk: c.GetRisk(), RiskText: c.GetRiskText(),
		Summary: c.GetSummary(), Facts: c.GetFacts(), ConsoleURL: c.GetConsoleUrl(), Locale: c.GetLocale()}
	for _, f := range c.GetFiles() {
		out.Files = append(out.Files, FileChange{Path: f.GetPath(), Note: f.GetNote(), Lines: f.GetLines(), More: f.GetMore()})
	}
	return out
}

// imagesFromProto keeps the images a channel can show within the limits; an image of another
// type or over the size limit is named by its artifact reference in the text instead (see
// ImageNotes), so nothing the job produced goes unmentioned.
func imagesFromProto(imgs []*commonv1.Image) (ok []Image, left []Image) {
	total := 0
	for _, im := range imgs {
		i := Image{ContentType: im.GetContentType(), Data: im.GetData(), Artifact: im.GetArtifact(), Caption: im.GetCaption()}
		if ImageTypeOK(i.ContentType) && len(i.Data) > 0 && total+len(i.Data) <= MaxImageBytes && len(ok) < MaxImages {
			ok = append(ok, i)
			total += len(i.Data)
			continue
		}
		i.Data = nil
		left = append(left, i)
	}
	return ok, left
}
