package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

func TestImagesPostgres(t *testing.T) { runImageContract(t, openPostgres) }

// runImageContract: every recorded image is a row with the hash and size approval computed,
// listed newest first and by job and time; rows survive a restart and can be neither changed
// nor removed by the service's own database role; bad input is refused before anything is
// written; kept bytes are stored once per hash within their bound.
func runImageContract(t *testing.T, open func(*testing.T) backend) {
	b, c := open(t), newClock()
	dir := t.TempDir()
	files, err := store.OpenImageFiles(dir, 20)
	if err != nil {
		t.Fatal(err)
	}
	log := b.store.(app.ImageLog)
	svc := app.New(b.store, nil, nil, app.Config{}, nil, app.WithClock(c.now), app.WithImages(log, files))
	ctx := context.Background()
	pic := []byte("\x89PNG picture one")
	rec, err := svc.RecordImage(ctx, app.ImageInput{JobID: " JOB_20260301_001 ", SessionID: "line:U1", Data: pic, MIMEType: "image/png",
		Provider: "ollama", Model: "qwen2.5vl:7b"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pic)
	if rec.ID == 0 || rec.JobID != "job_20260301_001" || rec.SHA256 != hex.EncodeToString(sum[:]) || rec.Size != int64(len(pic)) ||
		rec.MIMEType != "image/png" || rec.Provider != "ollama" || rec.Model != "qwen2.5vl:7b" || !rec.At.Equal(c.now()) || !rec.Kept {
		t.Fatalf("record %+v", rec)
	}
	if got, err := os.ReadFile(filepath.Join(dir, rec.SHA256+".png")); err != nil || string(got) != string(pic) {
		t.Fatalf("kept file = %q, %v", got, err)
	}
	c.advance(time.Minute)
	// Beyond the keep bound: recorded, not kept.
	big := []byte("a jpeg that does not fit")
	rec2, err := svc.RecordImage(ctx, app.ImageInput{JobID: "job_20260301_002", SessionID: "slack:C1:1.0", Data: big, MIMEType: "image/jpeg",
		Provider: "openai", Model: "gpt-4o"})
	if err != nil || rec2.Kept || rec2.ID <= rec.ID {
		t.Fatalf("second record %+v, %v", rec2, err)
	}
	for _, bad := range []app.ImageInput{
		{JobID: "job_20260301_003", Data: pic, MIMEType: "image/svg+xml", Provider: "ollama", Model: "m"},
		{JobID: "job_20260301_003", Data: nil, MIMEType: "image/png", Provider: "ollama", Model: "m"},
		{JobID: "job_20260301_003", Data: pic, MIMEType: "image/png", Provider: "", Model: "m"},
		{JobID: "not a job", Data: pic, MIMEType: "image/png", Provider: "ollama", Model: "m"},
	} {
		if _, err := svc.RecordImage(ctx, bad); err == nil {
			t.Errorf("RecordImage(%+v) accepted", bad)
		}
	}

	s2 := b.reopen(t)
	svc = app.New(s2, nil, nil, app.Config{}, nil, app.WithClock(c.now), app.WithImages(s2.(app.ImageLog), nil))
	all, err := svc.ListImages(ctx, domain.ImageFilter{})
	if err != nil || len(all) != 2 || all[0].ID != rec2.ID || all[1] != rec {
		t.Fatalf("ListImages = %+v, %v (want newest first, %+v last)", all, err, rec)
	}
	byJob, err := svc.ListImages(ctx, domain.ImageFilter{JobID: "JOB_20260301_001"})
	if err != nil || len(byJob) != 1 || byJob[0].ID != rec.ID {
		t.Fatalf("by job = %+v, %v", byJob, err)
	}
	since, err := svc.ListImages(ctx, domain.ImageFilter{Since: rec.At.Add(time.Second)})
	if err != nil || len(since) != 1 || since[0].ID != rec2.ID {
		t.Fatalf("since = %+v, %v", since, err)
	}
	one, err := svc.ListImages(ctx, domain.ImageFilter{Limit: 1})
	if err != nil || len(one) != 1 {
		t.Fatalf("limit = %+v, %v", one, err)
	}
	// Image turns' JobIDs hold the JobID floor up like jobs do.
	if n, err := svc.HighestJobNumber(ctx, "20260301"); err != nil || n != 2 {
		t.Errorf("HighestJobNumber = %d, %v; want 2 from the image log", n, err)
	}
	if err := b.exec(t, `UPDATE approval_images SET sha256 = $1 WHERE id = $2`, rec2.SHA256, rec.ID); err == nil {
		t.Error("an image record was changed")
	}
	if err := b.exec(t, `DELETE FROM approval_images WHERE id = $1`, rec.ID); err == nil {
		t.Error("an image record was removed")
	}
}

// Without an image log the service refuses to record: the caller must not send the image.
func TestRecordImageFailsClosed(t *testing.T) {
	svc := app.New(nil, nil, nil, app.Config{}, nil)
	_, err := svc.RecordImage(context.Background(), app.ImageInput{JobID: "job_20260301_001", Data: []byte("x"), MIMEType: "image/png", Provider: "ollama", Model: "m"})
	if err == nil {
		t.Fatal("recorded without a log")
	}
}
