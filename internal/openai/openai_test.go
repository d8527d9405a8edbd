package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/openai"
)

const key = "sk-test-0123456789"

// endpoint is an OpenAI-compatible server: it checks the bearer key and
// the request's wire format, then lets answer write the reply to the
// n-th call (from 1).
func endpoint(t *testing.T, answer func(w http.ResponseWriter, n int64, body map[string]any)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		var body map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		body["path"] = r.URL.Path
		answer(w, n, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func chatCompletion(w http.ResponseWriter, content string) {
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": content}}},
		"usage": map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

func client(srv *httptest.Server, apiKey string, timeout time.Duration) *openai.Client {
	return openai.New(openai.Config{BaseURL: srv.URL + "/v1/", APIKey: apiKey, Model: "m", Timeout: timeout})
}

func TestChatWireFormat(t *testing.T) {
	srv, _ := endpoint(t, func(w http.ResponseWriter, _ int64, body map[string]any) {
		msgs, _ := body["messages"].([]any)
		if body["path"] != "/v1/chat/completions" || body["model"] != "m" || body["temperature"] != 0.0 || len(msgs) != 2 {
			http.Error(w, fmt.Sprintf(`{"error":{"message":"unexpected %v"}}`, body), http.StatusBadRequest)
			return
		}
		chatCompletion(w, "hello "+msgs[1].(map[string]any)["content"].(string))
	})
	got, err := client(srv, key, time.Second).Chat(context.Background(),
		[]openai.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "world"}})
	if err != nil || got != "hello world" {
		t.Fatalf("chat: %q %v", got, err)
	}
}

func TestEmbedWireFormat(t *testing.T) {
	srv, _ := endpoint(t, func(w http.ResponseWriter, _ int64, body map[string]any) {
		input, _ := body["input"].([]any)
		if body["path"] != "/v1/embeddings" || body["encoding_format"] != "float" || body["dimensions"] != 4.0 {
			http.Error(w, `{"error":{"message":"unexpected"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(input) - 1; i >= 0; i-- { // out of order, as the API allows
			data = append(data, item{"embedding", i, []float32{float32(i), 1, 0, 0}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "m",
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	})
	vecs, err := client(srv, key, time.Second).Embed(context.Background(), []string{"a", "b", "c"}, 4)
	if err != nil || len(vecs) != 3 || vecs[0][0] != 0 || vecs[2][0] != 2 {
		t.Fatalf("embed: %v %v", vecs, err)
	}
	short, _ := endpoint(t, func(w http.ResponseWriter, _ int64, _ map[string]any) {
		_, _ = io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1]}]}`)
	})
	if _, err := client(short, key, time.Second).Embed(context.Background(), []string{"a", "b"}, 0); err == nil || err.Error() != "answer lacks an input" {
		t.Fatalf("an answer short of an input: %v", err)
	}
}

// TestRetry: 429 and 5xx are tried again, after Retry-After when the
// endpoint sends one; other failures, and waits longer than the bound or
// the deadline, end the call at once with the status.
func TestRetry(t *testing.T) {
	for _, tt := range []struct {
		name       string
		status     int
		retryAfter string
		failures   int64 // answers that fail before one succeeds
		calls      int64
		wantErr    string
		minTime    time.Duration
	}{
		{"5xx then success", http.StatusServiceUnavailable, "", 2, 3, "", 0},
		{"429 honours Retry-After", http.StatusTooManyRequests, "1", 1, 2, "", time.Second},
		{"5xx three times", http.StatusBadGateway, "", 10, 3, "status 502", 0},
		{"Retry-After past the bound", http.StatusTooManyRequests, "3600", 10, 1, "status 429: slow down", 0},
		{"Retry-After past the deadline", http.StatusTooManyRequests, "3", 10, 1, "status 429: slow down", 0},
		{"4xx is final", http.StatusBadRequest, "", 10, 1, "status 400: slow down", 0},
		{"501 is final", http.StatusNotImplemented, "", 10, 1, "status 501", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := endpoint(t, func(w http.ResponseWriter, n int64, _ map[string]any) {
				if n <= tt.failures {
					if tt.retryAfter != "" {
						w.Header().Set("Retry-After", tt.retryAfter)
					}
					w.WriteHeader(tt.status)
					if tt.status == http.StatusTooManyRequests || tt.status == http.StatusBadRequest {
						_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"requests"}}`)
					}
					return
				}
				chatCompletion(w, "ok")
			})
			start := time.Now()
			got, err := client(srv, key, 2*time.Second).Chat(context.Background(), []openai.Message{{Role: "user", Content: "x"}})
			took := time.Since(start)
			if calls.Load() != tt.calls || took < tt.minTime {
				t.Errorf("%d calls in %v, want %d in at least %v", calls.Load(), took, tt.calls, tt.minTime)
			}
			if tt.wantErr == "" {
				if err != nil || got != "ok" {
					t.Fatalf("want success: %q %v", got, err)
				}
				return
			}
			var oerr *openai.Error
			if err == nil || err.Error() != tt.wantErr || !errors.As(err, &oerr) || oerr.Status != tt.status {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if tt.calls == 1 && took > time.Second {
				t.Errorf("a final failure took %v", took)
			}
		})
	}
}

// TestErrorsHideTheKey: whatever fails, and whatever the endpoint echoes,
// the API key is not in the error.
func TestErrorsHideTheKey(t *testing.T) {
	const wrong = "sk-wrong-abcdefghijkl"
	srv, _ := endpoint(t, func(w http.ResponseWriter, _ int64, _ map[string]any) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"internal failure for key `+key+`"}}`)
	})
	_, err := client(srv, wrong, time.Second).Chat(context.Background(), []openai.Message{{Role: "user", Content: "x"}})
	if err == nil || !strings.HasPrefix(err.Error(), "status 401: Incorrect API key provided: [redacted]") || strings.Contains(err.Error(), wrong) {
		t.Errorf("401: %v", err)
	}
	_, err = client(srv, key, time.Second).Embed(context.Background(), []string{"x"}, 0)
	if err == nil || !strings.Contains(err.Error(), "status 500") || strings.Contains(err.Error(), key) {
		t.Errorf("500 echoing the key: %v", err)
	}
	srv.Close()
	_, err = client(srv, key, time.Second).Chat(context.Background(), []openai.Message{{Role: "user", Content: "x"}})
	if err == nil || !strings.HasPrefix(err.Error(), "endpoint unreachable") || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), srv.URL) {
		t.Errorf("unreachable: %v", err)
	}
}

func TestBoundsAndTimeout(t *testing.T) {
	srv, _ := endpoint(t, func(w http.ResponseWriter, n int64, _ map[string]any) {
		chatCompletion(w, strings.Repeat("x", 2<<20))
	})
	if _, err := client(srv, key, time.Second).Chat(context.Background(), []openai.Message{{Role: "user", Content: "x"}}); err == nil ||
		!strings.Contains(err.Error(), "answer larger than") {
		t.Errorf("a 2 MiB chat answer: %v", err)
	}
	slow, _ := endpoint(t, func(w http.ResponseWriter, _ int64, body map[string]any) {
		time.Sleep(time.Second)
		chatCompletion(w, "late")
	})
	start := time.Now()
	_, err := client(slow, key, 100*time.Millisecond).Chat(context.Background(), []openai.Message{{Role: "user", Content: "x"}})
	var oerr *openai.Error
	if err == nil || err.Error() != "timed out" || !errors.As(err, &oerr) || !oerr.Timeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow endpoint: %v", err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("the timeout took %v", took)
	}
	bad, _ := endpoint(t, func(w http.ResponseWriter, _ int64, _ map[string]any) { _, _ = io.WriteString(w, `{"choices":[`) })
	if _, err := client(bad, key, time.Second).Chat(context.Background(), []openai.Message{{Role: "user", Content: "x"}}); err == nil || err.Error() != "answer is not valid JSON" {
		t.Errorf("invalid JSON: %v", err)
	}
	empty, _ := endpoint(t, func(w http.ResponseWriter, _ int64, _ map[string]any) { chatCompletion(w, "  ") })
	if _, err := client(empty, key, time.Second).Chat(context.Background(), []openai.Message{{Role: "user", Content: "x"}}); err == nil || err.Error() != "empty answer" {
		t.Errorf("empty answer: %v", err)
	}
}
