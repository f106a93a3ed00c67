package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// suiteKeysFile holds the embedded suite's service keys, made on first start (mode 0600 in a
// 0700 directory), so `picoclaw run` needs no set-up and keeps its identities across restarts.
const suiteKeysFile = "service-keys.json"

// loadOrCreateSuiteKeys reads the suite's keys from dir, or generates and writes them.
func loadOrCreateSuiteKeys(dir string) (map[string]svcauth.KeyPair, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, texts.Wrap(nil, err, txtCredIO, dir, trouble(err))
	}
	// An existing directory keeps its mode through MkdirAll: tighten it.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, texts.Wrap(nil, err, txtCredIO, dir, trouble(err))
	}
	path := filepath.Join(dir, suiteKeysFile)
	keys, err := readSuiteKeys(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return keys, err
	}
	keys, err = svcauth.GenerateSuite()
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(keys, "", "  ")
	if err != nil {
		return nil, err
	}
	// O_EXCL: two suites starting at once must not overwrite each other's keys.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, texts.Wrap(nil, err, txtCredIO, path, trouble(err))
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return nil, texts.Wrap(nil, err, txtCredIO, path, trouble(err))
	}
	if err := f.Close(); err != nil {
		return nil, texts.Wrap(nil, err, txtCredIO, path, trouble(err))
	}
	return keys, nil
}

// readSuiteKeys reads the suite's keys from dir; a file others can read is refused.
func readSuiteKeys(dir string) (map[string]svcauth.KeyPair, error) {
	path := filepath.Join(dir, suiteKeysFile)
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, texts.New(nil, txtCredOpen, path, st.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, texts.Wrap(nil, err, txtCredIO, path, trouble(err))
	}
	var keys map[string]svcauth.KeyPair
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, texts.Wrap(nil, err, txtKeysBad, path, err.Error())
	}
	for _, id := range svcauth.Identities() {
		if _, ok := keys[id]; !ok {
			return nil, texts.New(nil, txtKeysMissing, path, id)
		}
	}
	return keys, nil
}

// authFor is the auth section of one identity of the embedded suite.
func authFor(keys map[string]svcauth.KeyPair, identity string) config.Auth {
	return config.Auth{PublicKeys: svcauth.PublicEntries(keys), ServiceKey: config.Secret(keys[identity].Private)}
}
