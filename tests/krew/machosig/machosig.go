// Package machosig checks that a Mach-O executable carries a valid code signature: macOS on Apple
// silicon kills an arm64 executable without one ("Killed: 9"), and a signature whose page hashes
// no longer match the file (a strip after linking) is refused the same way. There is no macOS here
// to run the darwin binaries, so the release tests (tests/krew/release) check the signature itself:
// the LC_CODE_SIGNATURE blob's CodeDirectory, each page hash recomputed over the file as it ships.
package machosig

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
)

const (
	loadCmdCodeSignature = 0x1d
	magicEmbeddedSig     = 0xfade0cc0
	magicCodeDirectory   = 0xfade0c02
	slotCodeDirectory    = 0
	flagAdhoc            = 0x2
	flagLinkerSigned     = 0x20000
	hashTypeSHA1         = 1
	hashTypeSHA256       = 2
)

// ErrUnsigned: the file has no LC_CODE_SIGNATURE at all (Intel Macs run such a file; Apple silicon
// does not).
var ErrUnsigned = errors.New("no LC_CODE_SIGNATURE: not signed (macOS on Apple silicon refuses to run it)")

// Verify reads the Mach-O file at path and recomputes every page hash of its code signature. It
// returns one line describing the signature, ErrUnsigned when there is none, or why it does not
// verify (not Mach-O, malformed, or the file changed after signing).
func Verify(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	f, err := macho.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	var off, size uint32
	found := false
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) >= 16 && f.ByteOrder.Uint32(raw) == loadCmdCodeSignature {
			off, size, found = f.ByteOrder.Uint32(raw[8:]), f.ByteOrder.Uint32(raw[12:]), true
		}
	}
	if !found {
		return "", ErrUnsigned
	}
	if uint64(off)+uint64(size) > uint64(len(data)) {
		return "", fmt.Errorf("the signature (%d bytes at %d) runs past the end of the file (%d bytes)", size, off, len(data))
	}
	blob := data[off : off+size]
	be := binary.BigEndian
	if len(blob) < 12 || be.Uint32(blob) != magicEmbeddedSig {
		return "", errors.New("LC_CODE_SIGNATURE does not point at an embedded signature")
	}
	count := be.Uint32(blob[8:])
	var cd []byte
	for i := uint32(0); i < count; i++ {
		entry := 12 + 8*int(i)
		if entry+8 > len(blob) {
			return "", errors.New("the signature's index is cut short")
		}
		if be.Uint32(blob[entry:]) == slotCodeDirectory {
			start := be.Uint32(blob[entry+4:])
			if int(start)+8 > len(blob) {
				return "", errors.New("the CodeDirectory lies outside the signature")
			}
			cd = blob[start:]
		}
	}
	if cd == nil || be.Uint32(cd) != magicCodeDirectory {
		return "", errors.New("the signature has no CodeDirectory")
	}
	if len(cd) < 44 {
		return "", errors.New("the CodeDirectory is cut short")
	}
	flags := be.Uint32(cd[12:])
	hashOffset := be.Uint32(cd[16:])
	identOffset := be.Uint32(cd[20:])
	nCodeSlots := be.Uint32(cd[28:])
	codeLimit := uint64(be.Uint32(cd[32:]))
	hashSize, hashType, pageShift := cd[36], cd[37], cd[39]
	if version := be.Uint32(cd[8:]); version >= 0x20300 && len(cd) >= 64 {
		if limit64 := be.Uint64(cd[56:]); limit64 != 0 {
			codeLimit = limit64
		}
	}
	// The signed part is the whole file up to the signature itself.
	if codeLimit != uint64(off) {
		return "", fmt.Errorf("the signature covers %d bytes, but the file's code runs to %d (changed after signing)", codeLimit, off)
	}
	var newHash func() hash.Hash
	switch hashType {
	case hashTypeSHA256:
		newHash = sha256.New
	case hashTypeSHA1:
		newHash = sha1.New
	default:
		return "", fmt.Errorf("unknown hash type %d", hashType)
	}
	pageSize := uint64(1) << pageShift
	if want := (codeLimit + pageSize - 1) / pageSize; uint64(nCodeSlots) != want {
		return "", fmt.Errorf("%d page hashes for %d pages", nCodeSlots, want)
	}
	for i := uint64(0); i < uint64(nCodeSlots); i++ {
		start, end := i*pageSize, min((i+1)*pageSize, codeLimit)
		h := newHash()
		h.Write(data[start:end])
		at := uint64(hashOffset) + i*uint64(hashSize)
		if at+uint64(hashSize) > uint64(len(cd)) {
			return "", errors.New("the page hashes run past the CodeDirectory")
		}
		if !bytes.Equal(h.Sum(nil)[:hashSize], cd[at:at+uint64(hashSize)]) {
			return "", fmt.Errorf("page %d (bytes %d-%d) does not match its hash: the file changed after signing", i, start, end)
		}
	}
	ident := cd[identOffset:]
	if n := bytes.IndexByte(ident, 0); n >= 0 {
		ident = ident[:n]
	}
	kind := "signed"
	switch {
	case flags&flagAdhoc != 0 && flags&flagLinkerSigned != 0:
		kind = "ad-hoc signed by the linker"
	case flags&flagAdhoc != 0:
		kind = "ad-hoc signed"
	}
	algo := map[uint8]string{hashTypeSHA1: "SHA-1", hashTypeSHA256: "SHA-256"}[hashType]
	return fmt.Sprintf("%s (identifier %s), %d pages of %d bytes, every %s page hash verified", kind, ident, nCodeSlots, pageSize, algo), nil
}
