package configs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// engram.yaml must state exactly the defaults in code, key for key.
func TestYAMLMatchesDefault(t *testing.T) {
	var cfg Config
	if err := decodeYAML(DefaultYAML, &cfg); err != nil {
		t.Fatal(err)
	}
	if want := Default(); !reflect.DeepEqual(cfg, want) {
		t.Fatalf("engram.yaml differs from Default():\n yaml %+v\n code %+v", cfg, want)
	}
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadLayers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "engram.yaml")
	if err := os.WriteFile(path, []byte("server:\n  addr: 127.0.0.1:9999\nlimits:\n  max_tags: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("from-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, []string{
		"ENGRAM_LIMITS_MAX_TAGS=7",
		"ENGRAM_SERVER_SHUTDOWN_TIMEOUT=3s",
		"ENGRAM_MEMORY_CATEGORIES=work, life",
		"ENGRAM_API_KEY_FILE=" + keyFile,
		"ENGRAM_USER_ID=ann",
		"OTHER=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Addr != "127.0.0.1:9999" {
		t.Errorf("file not applied: addr %q", cfg.Server.Addr)
	}
	if cfg.Auth.UserID != "ann" {
		t.Errorf("ENGRAM_USER_ID is short for ENGRAM_AUTH_USER_ID: %q", cfg.Auth.UserID)
	}
	if cfg.Limits.MaxTags != 7 {
		t.Errorf("env must override file: max_tags %d", cfg.Limits.MaxTags)
	}
	if cfg.Server.ShutdownTimeout != 3*time.Second {
		t.Errorf("duration env: %v", cfg.Server.ShutdownTimeout)
	}
	if !reflect.DeepEqual(cfg.Memory.Categories, []string{"work", "life"}) {
		t.Errorf("list env: %q", cfg.Memory.Categories)
	}
	if cfg.Auth.APIKey != "from-file-0123456789" {
		t.Errorf("_FILE secret: %q", cfg.Auth.APIKey)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.yaml")
	if err := os.WriteFile(unknown, []byte("sever:\n  addr: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		env        []string
		want       string
	}{
		{"unknown key", unknown, nil, "sever"},
		{"missing file", filepath.Join(dir, "nope.yaml"), nil, "no such file"},
		{"bad int", "", []string{"ENGRAM_LIMITS_MAX_TAGS=many"}, "ENGRAM_LIMITS_MAX_TAGS"},
		{"bad driver", "", []string{"ENGRAM_STORE_DRIVER=mysql"}, "store.driver"},
		{"postgres without dsn", "", []string{"ENGRAM_STORE_DRIVER=postgres"}, "store.dsn"},
		{"bad addr", "", []string{"ENGRAM_SERVER_ADDR=8080"}, "server.addr"},
		{"default category not listed", "", []string{"ENGRAM_MEMORY_CATEGORIES=work"}, "memory.default_category"},
		{"short api key", "", []string{"ENGRAM_API_KEY=short"}, "auth.api_key"},
		{"bad encoding", "", []string{"ENGRAM_TOKENS_ENCODING=gpt2"}, "tokens.encoding"},
		{"embedding weight 0", "", []string{"ENGRAM_EMBEDDINGS_BASE_URL=http://127.0.0.1:1/v1", "ENGRAM_EMBEDDINGS_WEIGHT=0"}, "embeddings.weight"},
		{"embedding weight above 1", "", []string{"ENGRAM_EMBEDDINGS_BASE_URL=http://127.0.0.1:1/v1", "ENGRAM_EMBEDDINGS_WEIGHT=1.5"}, "embeddings.weight"},
		{"agree floor 1", "", []string{"ENGRAM_EMBEDDINGS_BASE_URL=http://127.0.0.1:1/v1", "ENGRAM_EMBEDDINGS_AGREE_FLOOR=1"}, "embeddings.agree_floor"},
		{"negative vector cache", "", []string{"ENGRAM_EMBEDDINGS_BASE_URL=http://127.0.0.1:1/v1", "ENGRAM_EMBEDDINGS_CACHE_MB=-1"}, "embeddings.cache_mb"},
		{"missing secret file", "", []string{"ENGRAM_STORE_DSN_FILE=/nonexistent/x"}, "ENGRAM_STORE_DSN_FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.path, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v, want error mentioning %q", err, tc.want)
			}
		})
	}
}

func TestMirrorDefault(t *testing.T) {
	c := Default()
	if !c.MirrorOn() || c.MirrorDir() != filepath.Join("data", "mirror") {
		t.Fatalf("SQLite: mirror on at data/mirror, got %v %q", c.MirrorOn(), c.MirrorDir())
	}
	c.Store.Driver, c.Store.DSN = "postgres", "host=db"
	if c.MirrorOn() {
		t.Fatal("PostgreSQL: the mirror is off unless set")
	}
	c.Mirror.Enabled, c.Mirror.Dir = "true", "/srv/mirror"
	if !c.MirrorOn() || c.MirrorDir() != "/srv/mirror" {
		t.Fatal("mirror.enabled true and mirror.dir must apply")
	}
	c.Mirror.Enabled, c.Mirror.MaxLogBytes = "yes", 10
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "mirror.enabled") || !strings.Contains(err.Error(), "max_log_bytes") {
		t.Fatalf("want both mirror errors, got %v", err)
	}
}
