package testing

import (
	"encoding/pem"
)

// FakeCA is a PEM CERTIFICATE block whose content is name: it reads as a CA
// bundle to code that checks the encoding (the direct entry refuses what is
// not PEM), stays recognisable in diffs, and differs per name.
func FakeCA(name string) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(name)})
}

// FakeCAString is FakeCA as a string, for comparisons.
func FakeCAString(name string) string { return string(FakeCA(name)) }
