package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// minSecretBytes is the shortest generated or accepted credential.
const minSecretBytes = 32

// loadOrCreateSecret returns the credential kept in dir/name, generating it on first use: 32
// random bytes, hex encoded, in a file only the owner can read (0600, directory 0700). A file
// that others can read, or one that is too short, is refused rather than used.
func loadOrCreateSecret(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	if s, err := readSecret(path); !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", texts.Wrap(nil, err, txtCredIO, dir, trouble(err))
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", texts.Wrap(nil, err, txtCredIO, path, err.Error())
	}
	secret := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readSecret(path) // another process created it first
	}
	if err != nil {
		return "", texts.Wrap(nil, err, txtCredIO, path, trouble(err))
	}
	if _, err := f.WriteString(secret + "\n"); err != nil {
		_ = f.Close()
		return "", texts.Wrap(nil, err, txtCredIO, path, trouble(err))
	}
	if err := f.Close(); err != nil {
		return "", texts.Wrap(nil, err, txtCredIO, path, trouble(err))
	}
	return secret, nil
}

// readSecret reads an existing credential file.
func readSecret(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", texts.New(nil, txtCredOpen, path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", texts.Wrap(nil, err, txtCredIO, path, trouble(err))
	}
	s := strings.TrimSpace(string(b))
	if len(s) < minSecretBytes {
		return "", texts.New(nil, txtCredShort, path, minSecretBytes)
	}
	return s, nil
}
