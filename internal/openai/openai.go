// Package openai is engram's one client of OpenAI-compatible HTTP APIs:
// chat completions (the reflector's abstractive writer, the session
// summariser) and embeddings (hybrid recall). Every caller gets the same
// timeout, retry policy, response bound and care for the API key, so a
// fix to one is a fix to all.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config names an endpoint and how long a call to it may take.
type Config struct {
	// BaseURL is the API's root, e.g. "https://api.openai.com/v1"; a
	// trailing slash is ignored.
	BaseURL string
	// APIKey is sent as a bearer token when set. It never appears in an
	// error, even when the endpoint echoes it back.
	APIKey string
	// Model names the model of every request.
	Model string
	// Timeout bounds one call, its retries and their waits included; 0
	// leaves the bound to the caller's context.
	Timeout time.Duration
}

// Retry policy: a 429 or a 5xx answer is tried again up to maxRetries
// times, after the endpoint's Retry-After when it sends one, else after
// retryBase doubled each time. A Retry-After longer than maxRetryWait, or
// a wait that would outlast the call's deadline, ends the call with the
// answer in hand instead: sleeping past what the caller allowed helps no one.
const (
	maxRetries   = 2
	retryBase    = 250 * time.Millisecond
	maxRetryWait = 10 * time.Second
)

// Response bounds: an answer longer than this is refused, not cut (a cut
// JSON document would only fail to decode with a less useful message).
// Embeddings are large (64 vectors of 3,072 floats as decimal text are
// about 4 MiB); a chat answer engram asks for is a page at most.
const (
	maxChatBytes  = 1 << 20
	maxEmbedBytes = 64 << 20
	// maxMessageChars bounds the endpoint's error message kept in an error.
	maxMessageChars = 300
)

// Client calls one endpoint with one model. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
}

// New returns a client for cfg.
func New(cfg Config) *Client {
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	return &Client{cfg: cfg, http: &http.Client{}}
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.cfg.Model }

// Error is a failed call. Its text carries no package prefix, because
// callers show it after their own ("chat: timed out", "embeddings:
// status 401: …"), and never the API key.
type Error struct {
	// Status is the HTTP status of the last answer; 0 when none came.
	Status int
	// Timeout is set when the call ran out of time.
	Timeout bool
	msg     string
	err     error
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the cause: context.DeadlineExceeded for a timeout, the
// transport's error for an unreachable endpoint.
func (e *Error) Unwrap() error { return e.err }

// Message is one message of a chat.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Chat asks POST {base}/chat/completions, at temperature 0, for the answer
// to messages and returns the first choice's content. An empty answer is
// an error.
func (c *Client) Chat(ctx context.Context, messages []Message) (string, error) {
	req := struct {
		Model       string    `json:"model"`
		Temperature float64   `json:"temperature"`
		Messages    []Message `json:"messages"`
	}{c.cfg.Model, 0, messages}
	var out struct {
		Choices []struct {
			Message Message `json:"message"`
		} `json:"choices"`
	}
	if err := c.call(ctx, "/chat/completions", req, maxChatBytes, &out); err != nil {
		return "", err
	}
	if len(out.Choices) == 0 || strings.TrimSpace(out.Choices[0].Message.Content) == "" {
		return "", &Error{Status: http.StatusOK, msg: "empty answer"}
	}
	return out.Choices[0].Message.Content, nil
}

// Embed asks POST {base}/embeddings for the vectors of texts and returns
// them in the order of texts; dims 0 leaves their size to the model. An
// answer that lacks a text, or names one that was not asked, is an error.
func (c *Client) Embed(ctx context.Context, texts []string, dims int) ([][]float32, error) {
	req := struct {
		Model          string   `json:"model"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
		Dimensions     int      `json:"dimensions,omitempty"`
	}{c.cfg.Model, texts, "float", dims}
	var out struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		} `json:"data"`
	}
	if err := c.call(ctx, "/embeddings", req, maxEmbedBytes, &out); err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(texts) || len(d.Embedding) == 0 {
			return nil, &Error{Status: http.StatusOK, msg: "answer does not match the request"}
		}
		vecs[d.Index] = d.Embedding
	}
	for _, v := range vecs {
		if v == nil {
			return nil, &Error{Status: http.StatusOK, msg: "answer lacks an input"}
		}
	}
	return vecs, nil
}

// call posts body as JSON to path and decodes a 200 answer into out,
// retrying as the retry policy says.
func (c *Client) call(ctx context.Context, path string, body any, limit int64, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		status, answer, wait, err := c.post(ctx, path, raw, limit)
		if err != nil {
			return err
		}
		if status == http.StatusOK {
			if err := json.Unmarshal(answer, out); err != nil {
				return &Error{Status: status, msg: "answer is not valid JSON"}
			}
			return nil
		}
		failed := c.statusError(status, answer)
		if attempt == maxRetries || !retryable(status) || wait > maxRetryWait {
			return failed
		}
		if wait < 0 {
			wait = retryBase << attempt
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return failed
		}
		select {
		case <-ctx.Done():
			return c.transportError(ctx, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// post makes one request and returns the status, the body (at most limit
// bytes) and the wait the answer's Retry-After asks for (-1 when none).
func (c *Client) post(ctx context.Context, path string, body []byte, limit int64) (int, []byte, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		// The URL is the configured one; its text may hold credentials.
		return 0, nil, 0, &Error{msg: "invalid base URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, 0, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, nil, 0, c.transportError(ctx, err)
	}
	if int64(len(answer)) > limit {
		return 0, nil, 0, &Error{Status: resp.StatusCode, msg: fmt.Sprintf("answer larger than %d bytes", limit)}
	}
	return resp.StatusCode, answer, retryAfter(resp.Header.Get("Retry-After")), nil
}

// transportError is a call that got no complete answer: timed out, or the
// endpoint unreachable (with the cause, the URL left out).
func (c *Client) transportError(ctx context.Context, err error) error {
	var timeout interface{ Timeout() bool }
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &timeout) && timeout.Timeout() {
		return &Error{Timeout: true, msg: "timed out", err: context.DeadlineExceeded}
	}
	if ctx.Err() != nil {
		return &Error{msg: "canceled", err: ctx.Err()}
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return &Error{msg: "endpoint unreachable: " + c.redact(err.Error()), err: err}
}

// statusError is an answer other than 200: its status and, when the body
// is an OpenAI error object, its message.
func (c *Client) statusError(status int, answer []byte) error {
	var body struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := fmt.Sprintf("status %d", status)
	if json.Unmarshal(answer, &body) == nil && body.Error != nil && body.Error.Message != "" {
		text := []rune(c.redact(strings.Join(strings.Fields(body.Error.Message), " ")))
		if len(text) > maxMessageChars {
			text = append(text[:maxMessageChars-1], '…')
		}
		msg += ": " + string(text)
	}
	return &Error{Status: status, msg: msg}
}

// redact takes the API key out of text an endpoint or the transport wrote.
func (c *Client) redact(text string) string {
	if c.cfg.APIKey == "" {
		return text
	}
	return strings.ReplaceAll(text, c.cfg.APIKey, "[redacted]")
}

// retryable reports a status worth trying again: rate limited, or the
// server failing. A 501 will not be implemented by the next attempt.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 && status != http.StatusNotImplemented
}

// retryAfter reads a Retry-After header, seconds or an HTTP date; -1 when
// it is absent or unreadable.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(min(s, 1<<20)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}
