package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxAnswerBytes bounds how much of a provider's answer is read.
const maxAnswerBytes = 16 << 20

// ErrorText reads the provider's own message from an error body; "" when it has none.
type ErrorText func(body []byte) string

// PostJSON posts in as JSON to url with header and decodes the answer into out (DoJSON).
func PostJSON(ctx context.Context, hc *http.Client, url string, header http.Header, in, out any, errText ErrorText) error {
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	for k, v := range header {
		hreq.Header[k] = v
	}
	hreq.Header.Set("Content-Type", "application/json")
	return DoJSON(hc, hreq, out, errText)
}

// DoJSON sends hreq and decodes a 2xx JSON answer into out. A non-2xx status is an
// HTTPStatusError carrying the provider's own message (errText), an undecodable 2xx body is a
// BadResponse, and a transport or context error is passed on as it is, so the call policy
// classifies every provider's failures the same way.
func DoJSON(hc *http.Client, hreq *http.Request, out any, errText ErrorText) error {
	hreq.Header.Set("Accept", "application/json")
	res, err := hc.Do(hreq)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		msg := ""
		if errText != nil {
			msg = errText(raw)
		}
		return HTTPStatusError(res.StatusCode, res.Header, msg)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return BadResponse("%s %s: %v", hreq.Method, hreq.URL.Path, err)
	}
	return nil
}
