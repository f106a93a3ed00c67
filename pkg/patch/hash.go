package patch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
)

// hashDomain versions the canonical encoding; changing the encoding needs a new domain so old
// approvals can never match new content by accident.
const hashDomain = "picoclaw.patch.v1\n"

type canonicalOp struct {
	Index         int         `json:"i"`
	Type          Type        `json:"t"`
	Action        string      `json:"a"`
	Target        string      `json:"g"`
	ContentSHA256 string      `json:"c"`
	Metadata      [][2]string `json:"m"`
}

// Hash is the hex sha256 of the canonical encoding of ops: index, type, action, target,
// content digest and metadata sorted by key. Flags and sources are derived data and are not
// part of it. The content digest is recomputed here, so a tampered ContentSHA256 field
// cannot hide a change of Content.
func Hash(ops []Operation) string {
	list := make([]canonicalOp, len(ops))
	for i, op := range ops {
		keys := make([]string, 0, len(op.Metadata))
		for k := range op.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		md := make([][2]string, 0, len(keys))
		for _, k := range keys {
			md = append(md, [2]string{k, op.Metadata[k]})
		}
		sum := sha256.Sum256([]byte(op.Content))
		list[i] = canonicalOp{
			Index: op.Index, Type: op.Type, Action: op.Action, Target: op.Target,
			ContentSHA256: hex.EncodeToString(sum[:]), Metadata: md,
		}
	}
	// Marshalling strings, ints and slices cannot fail.
	b, _ := json.Marshal(list)
	h := sha256.New()
	h.Write([]byte(hashDomain))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// Verify parses text and checks that it hashes to want. It returns the parsed patch, or an
// error wrapping ErrInvalid (the text no longer parses) or ErrHashMismatch.
func Verify(text, want string, opts Options) (*Patch, error) {
	p, err := Parse(text, opts)
	if err != nil {
		return nil, err
	}
	if p.Hash != want {
		return p, fmt.Errorf("%w: content hashes to %s, approved %s", ErrHashMismatch, p.Hash, want)
	}
	return p, nil
}
