package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
)

// deadLetters lists a gateway's dead letters over its REST API (the approvers' token), as
// `picoclaw deadletters list` does.
func deadLetters(ctx context.Context, publicURL, token string) ([]channel.DeadLetterJSON, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, publicURL+channel.DeadLettersPath+"?limit=500", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", res.Status, body)
	}
	var list channel.DeadLetterList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	return list.DeadLetters, nil
}
