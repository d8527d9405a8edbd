package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/peer"
	"github.com/engram-memory/engram/internal/ratelimit"
)

const requestIDHeader = "X-Request-ID"

// requestID takes the client's X-Request-ID when it is short and plain,
// else makes one, and echoes it on the response.
func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader(requestIDHeader)
	if !plainID(id) {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
	}
	c.Set("request_id", id)
	c.Header(requestIDHeader, id)
	c.Next()
}

func plainID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// recoverer turns a panic into a 500 with the usual error body, and logs
// the stack; the process keeps serving.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.cfg.Logger.Error("panic", "request_id", c.GetString("request_id"), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			writeError(c, fmt.Errorf("panic: %v", v))
		}
	}()
	c.Next()
}

// logRequests writes one line per request. The Authorization header and
// bodies are never logged.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	level := slog.LevelInfo
	if c.Writer.Status() >= 500 {
		level = slog.LevelError
	}
	attrs := []any{"method", c.Request.Method, "route", routeOf(c), "status", c.Writer.Status(),
		"duration_ms", float64(time.Since(start).Microseconds()) / 1000, "request_id", c.GetString("request_id")}
	if t := c.GetString("tenant_id"); t != "" {
		attrs = append(attrs, "tenant_id", t)
	}
	if len(c.Errors) > 0 {
		attrs = append(attrs, "err", c.Errors.String())
	}
	s.cfg.Logger.Log(c.Request.Context(), level, "request", attrs...)
}

// routeOf is the matched route pattern (not the raw path, which may hold
// keys and ids), or "unmatched".
func routeOf(c *gin.Context) string {
	if r := c.FullPath(); r != "" {
		return r
	}
	return "unmatched"
}

// authenticate resolves "Authorization: Bearer <key>" to a tenant and
// puts it, with the actor, into the request context.
func (s *Server) authenticate(c *gin.Context) {
	scheme, secret, ok := strings.Cut(c.GetHeader("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		writeError(c, engram.Errorf(engram.EUNAUTHORIZED, "missing API key; send Authorization: Bearer <key>"))
		return
	}
	key, err := s.cfg.Auth.Authenticate(c.Request.Context(), strings.TrimSpace(secret))
	if err != nil {
		writeError(c, err)
		return
	}
	c.Set("tenant_id", key.TenantID)
	ctx := engram.NewContextWithTenant(c.Request.Context(), key.TenantID)
	ctx = engram.NewContextWithActor(ctx, engram.Actor{KeyID: key.ID, RequestID: c.GetString("request_id")})
	ctx = engram.NewContextWithReader(ctx, readerOf(key))
	c.Request = c.Request.WithContext(ctx)
	c.Writer = &withheldWriter{ResponseWriter: c.Writer, c: c}
	c.Next()
}

// peerInfo puts the client's address (gin's ClientIP, which believes
// X-Forwarded-For from server.trusted_proxies only) and whether it came
// over TLS into the request context, for the handlers mounted below the
// server (the console's cookies and sign-in slowdown).
func (s *Server) peerInfo(c *gin.Context) {
	r := c.Request
	secure := r.TLS != nil
	if !secure && s.fromTrustedProxy(r) {
		proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
		secure = strings.EqualFold(strings.TrimSpace(proto), "https")
	}
	c.Request = r.WithContext(peer.NewContext(r.Context(), peer.Info{Addr: c.ClientIP(), TLS: secure}))
	c.Next()
}

// fromTrustedProxy reports whether the TCP peer of r is one of
// server.trusted_proxies.
func (s *Server) fromTrustedProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range s.trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// parseProxies reads server.trusted_proxies: IPs and CIDRs.
func parseProxies(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("server: trusted proxy %q is not an IP or CIDR", s)
		}
		ip = ip.Unmap()
		out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
	}
	return out, nil
}

// slowGuessing answers 429 (with Retry-After), before the key is
// checked, a client address that sent too many bad bearer keys, so that
// guessing keys stays slow; a request that comes back 401 with a key
// counts as a failure. Requests without a key cost nothing (they guess
// nothing), nor do successes.
func (s *Server) slowGuessing(c *gin.Context) {
	addr := c.ClientIP()
	if wait := s.cfg.Failures.Wait(addr); wait > 0 {
		c.Header("Retry-After", strconv.Itoa(ratelimit.RetryAfter(wait)))
		writeError(c, engram.Errorf(engram.ERATELIMITED, "too many bad API keys from this address; retry in %d s", ratelimit.RetryAfter(wait)))
		return
	}
	c.Next()
	if c.Writer.Status() == http.StatusUnauthorized && c.GetHeader("Authorization") != "" {
		s.cfg.Failures.Fail(addr)
	}
}
