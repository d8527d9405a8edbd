package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Load returns Default, overlaid with the YAML file at path (if path is
// not empty), then with the environment, then validated.
func Load(path string, environ []string) (Config, error) {
	cfg := Default()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
		if err := decodeYAML(b, &cfg); err != nil {
			return cfg, fmt.Errorf("config: %s: %w", path, err)
		}
	}
	if err := applyEnv(&cfg, environ); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func decodeYAML(b []byte, cfg *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return err // io.EOF: an empty file overrides nothing
	}
	return nil
}

// applyEnv overlays ENGRAM_* variables on cfg.
func applyEnv(cfg *Config, environ []string) error {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "ENGRAM_") {
			env[k] = v
		}
	}
	if v, ok := env["ENGRAM_API_KEY"]; ok {
		env["ENGRAM_AUTH_API_KEY"] = v
	}
	if v, ok := env["ENGRAM_API_KEY_FILE"]; ok {
		env["ENGRAM_AUTH_API_KEY_FILE"] = v
	}
	for _, suffix := range []string{"", "_FILE"} {
		if v, ok := env["ENGRAM_ADMIN_KEY"+suffix]; ok {
			env["ENGRAM_AUTH_ADMIN_KEY"+suffix] = v
		}
	}
	if v, ok := env["ENGRAM_USER_ID"]; ok {
		env["ENGRAM_AUTH_USER_ID"] = v
	}
	return walk(reflect.ValueOf(cfg).Elem(), "ENGRAM", func(name string, f reflect.Value, secret bool) error {
		raw, ok := env[name]
		if secret {
			if file, fok := env[name+"_FILE"]; fok {
				b, err := os.ReadFile(file)
				if err != nil {
					return fmt.Errorf("config: %s_FILE: %w", name, err)
				}
				raw, ok = strings.TrimSpace(string(b)), true
			}
		}
		if !ok {
			return nil
		}
		if err := setValue(f, raw); err != nil {
			return fmt.Errorf("config: %s: %w", name, err)
		}
		return nil
	})
}

// walk calls fn for every leaf field of v with its environment name.
func walk(v reflect.Value, prefix string, fn func(name string, f reflect.Value, secret bool) error) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name := prefix + "_" + strings.ToUpper(sf.Tag.Get("yaml"))
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			if err := walk(f, name, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(name, f, sf.Tag.Get("secret") == "true"); err != nil {
			return err
		}
	}
	return nil
}

func setValue(f reflect.Value, raw string) error {
	switch f.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		f.SetInt(int64(d))
		return nil
	case []string:
		var list []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		f.Set(reflect.ValueOf(list))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(raw)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return fmt.Errorf("want an integer, got %q", raw)
		}
		f.SetInt(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return fmt.Errorf("want a number, got %q", raw)
		}
		f.SetFloat(x)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", raw)
		}
		f.SetBool(b)
	default:
		return fmt.Errorf("unsupported type %s", f.Type())
	}
	return nil
}
