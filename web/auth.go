package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/peer"
	"github.com/engram-memory/engram/internal/ratelimit"
)

// Cookie names. The session cookie holds a random token whose SHA-256 is
// the session's id in the store; the sign-in cookie holds the CSRF token
// of the sign-in form, which has no session yet (double submit).
const (
	sessionCookie = "engram_session"
	signinCookie  = "engram_signin"
	langCookie    = "engram_lang"
	cookiePath    = "/console/"
)

// session is a signed-in request's view: the stored session and the names
// the header shows.
type session struct {
	*engram.ConsoleSession
	Tenant     string // name of the tenant shown
	HomeTenant string // name of the key's tenant
	Admin      bool
	Tenants    []*engram.Tenant // what an admin may switch to
}

type sessionKey struct{}

func sessionOf(r *http.Request) *session {
	s, _ := r.Context().Value(sessionKey{}).(*session)
	return s
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// setCookie sets a console cookie, Secure when the request reached engram
// over TLS: its own, or a trusted proxy's (X-Forwarded-Proto: https from
// server.trusted_proxies; see internal/peer).
func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: cookiePath, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: peer.FromRequest(r).TLS})
}

// tenantNames maps tenant ids to names.
func (c *Console) tenantNames(ctx context.Context) (map[string]string, []*engram.Tenant, error) {
	if c.cfg.Tenants == nil {
		return map[string]string{}, nil, nil
	}
	ts, err := c.cfg.Tenants.FindTenants(ctx)
	if err != nil {
		return nil, nil, err
	}
	names := make(map[string]string, len(ts))
	for _, t := range ts {
		names[t.ID] = t.Name
	}
	return names, ts, nil
}

// signedIn loads the session from the cookie (else redirects to the
// sign-in page), refuses a form post without the session's CSRF token,
// and runs h with the session's tenant and key in the context.
func (c *Console) signedIn(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(sessionCookie)
		var stored *engram.ConsoleSession
		if err == nil {
			stored, err = c.cfg.Sessions.FindConsoleSession(r.Context(), hashToken(ck.Value), c.cfg.Now())
		}
		if err != nil {
			if ck != nil {
				c.setCookie(w, r, sessionCookie, "", -1)
			}
			if engram.ErrorCode(err) != engram.EUNAUTHORIZED && err != http.ErrNoCookie {
				c.renderError(w, r, nil, err)
				return
			}
			if r.Method != http.MethodGet {
				c.renderError(w, r, nil, engram.Errorf(engram.EUNAUTHORIZED, "sign in first"))
				return
			}
			http.Redirect(w, r, "/console/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		s := &session{ConsoleSession: stored}
		names, tenants, err := c.tenantNames(r.Context())
		if err != nil {
			c.renderError(w, r, nil, err)
			return
		}
		s.Tenant, s.HomeTenant = names[s.TenantID], names[s.HomeTenantID]
		s.Admin = c.cfg.AdminTenant != "" && s.HomeTenant == c.cfg.AdminTenant
		if s.Admin {
			s.Tenants = tenants
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if !sameToken(r.PostFormValue("csrf"), s.CSRF) {
				c.renderError(w, r, s, &engram.Error{Code: errForbidden, Message: "this form has no valid CSRF token; reload the page and try again"})
				return
			}
		}
		ctx := engram.NewContextWithTenant(r.Context(), s.TenantID)
		ctx = engram.NewContextWithActor(ctx, engram.Actor{KeyID: s.KeyID, RequestID: w.Header().Get("X-Request-ID")})
		ctx = context.WithValue(ctx, sessionKey{}, s)
		h(w, r.WithContext(ctx))
	})
}

type signinData struct {
	Next  string
	Error string
}

func (c *Console) handleSignInPage(w http.ResponseWriter, r *http.Request) {
	c.renderSignIn(w, r, http.StatusOK, "")
}

func (c *Console) renderSignIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	// Two sign-in tabs share the cookie, so a token already set is kept.
	token := randomToken()
	if ck, err := r.Cookie(signinCookie); err == nil && len(ck.Value) == len(token) {
		token = ck.Value
	}
	c.setCookie(w, r, signinCookie, token, 3600)
	p := c.newPage(r, nil, "signin")
	p.CSRF = token
	p.Data = signinData{Next: safeNext(r.FormValue("next")), Error: msg}
	c.render(w, status, "signin", p)
}

func (c *Console) handleSignIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	ck, err := r.Cookie(signinCookie)
	if err != nil || !sameToken(r.PostFormValue("csrf"), ck.Value) {
		c.renderError(w, r, nil, &engram.Error{Code: errForbidden, Message: "this form has no valid CSRF token; reload the page and try again"})
		return
	}
	lang := langOf(r)
	secret := strings.TrimSpace(r.PostFormValue("key"))
	if secret == "" {
		c.renderSignIn(w, r, http.StatusBadRequest, tr(lang, "signin.empty"))
		return
	}
	// Too many failures from this address: refused before the key is
	// checked, so that guessing stays slow.
	addr := peer.FromRequest(r).Addr
	if wait := c.cfg.Failures.Wait(addr); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ratelimit.RetryAfter(wait)))
		c.renderSignIn(w, r, http.StatusTooManyRequests, tr(lang, "signin.slow"))
		return
	}
	key, err := c.cfg.Auth.Authenticate(r.Context(), secret)
	if err != nil {
		if engram.ErrorCode(err) == engram.EUNAUTHORIZED {
			c.cfg.Failures.Fail(addr)
			c.cfg.Logger.Info("console sign-in refused", "remote", addr)
			c.renderSignIn(w, r, http.StatusUnauthorized, tr(lang, "signin.wrong"))
			return
		}
		c.renderError(w, r, nil, err)
		return
	}
	token := randomToken()
	now := c.cfg.Now()
	s := &engram.ConsoleSession{ID: hashToken(token), KeyID: key.ID, HomeTenantID: key.TenantID, TenantID: key.TenantID,
		CSRF: randomToken(), CreatedAt: now, ExpiresAt: now.Add(c.cfg.SessionTTL)}
	if err := c.cfg.Sessions.CreateConsoleSession(r.Context(), s); err != nil {
		c.renderError(w, r, nil, err)
		return
	}
	c.cfg.Logger.Info("console sign-in", "key_id", key.ID, "tenant_id", key.TenantID)
	c.setCookie(w, r, signinCookie, "", -1)
	c.setCookie(w, r, sessionCookie, token, int(c.cfg.SessionTTL/time.Second))
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

func (c *Console) handleSignOut(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	if err := c.cfg.Sessions.DeleteConsoleSession(r.Context(), s.ID); err != nil {
		c.renderError(w, r, s, err)
		return
	}
	c.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
}

// handleSwitchTenant lets an admin look at another tenant. Anyone else is
// refused, and so is an unknown tenant.
func (c *Console) handleSwitchTenant(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	if !s.Admin {
		c.renderError(w, r, s, &engram.Error{Code: errForbidden, Message: "only an admin key may switch tenants"})
		return
	}
	want := r.PostFormValue("tenant")
	for _, t := range s.Tenants {
		if t.Name == want {
			if err := c.cfg.Sessions.SetConsoleTenant(r.Context(), s.ID, t.ID); err != nil {
				c.renderError(w, r, s, err)
				return
			}
			http.Redirect(w, r, "/console/", http.StatusSeeOther)
			return
		}
	}
	c.renderError(w, r, s, engram.Errorf(engram.ENOTFOUND, "no tenant named %q", want))
}

// handleLang remembers the language for a year and goes back.
func (c *Console) handleLang(w http.ResponseWriter, r *http.Request) {
	lang := r.URL.Query().Get("to")
	if lang != "en" && lang != "zh" {
		lang = "en"
	}
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: lang, Path: cookiePath, MaxAge: 365 * 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: peer.FromRequest(r).TLS})
	http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
}
