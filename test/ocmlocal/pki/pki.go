//go:build linux

// Package pki makes the key material of the harness's control planes: a
// certificate authority per control plane (which signs the API server's
// serving certificate, the client certificates it accepts and, through
// kube-controller-manager, approved CSRs), the front proxy's, and the
// service account signing key; and writes it with owner-only permissions.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Authority is a certificate authority the harness makes for one control
// plane. The same key signs the API server's serving certificate, the client
// certificates the API server accepts (--client-ca-file) and, through
// kube-controller-manager, the certificates of approved CSRs, so that
// certificates issued by the real CSR flow authenticate like any other.
type Authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// CertPEM and KeyPEM are the CA's certificate and key.
	CertPEM, KeyPEM []byte
}

// NewAuthority makes a self-signed CA named name, valid for ten years.
func NewAuthority(name string) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating key of CA %s: %w", name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("signing CA %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &Authority{cert: cert, key: key, CertPEM: encodeCert(der), KeyPEM: keyPEM}, nil
}

// KeyPair is a PEM certificate and key.
type KeyPair struct{ CertPEM, KeyPEM []byte }

// Serving issues a serving certificate for the given DNS names and IPs.
func (a *Authority) Serving(cn string, hosts ...string) (KeyPair, error) {
	tmpl := a.leaf(pkix.Name{CommonName: cn}, x509.ExtKeyUsageServerAuth)
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return a.sign(tmpl)
}

// Client issues a client certificate for a user and its groups.
func (a *Authority) Client(user string, groups ...string) (KeyPair, error) {
	return a.sign(a.leaf(pkix.Name{CommonName: user, Organization: groups}, x509.ExtKeyUsageClientAuth))
}

func (a *Authority) leaf(subject pkix.Name, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
}

func (a *Authority) sign(tmpl *x509.Certificate) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("signing certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{CertPEM: encodeCert(der), KeyPEM: keyPEM}, nil
}

// ServiceAccountKey makes the RSA key kube-apiserver signs service account
// tokens with (and kube-controller-manager signs legacy token Secrets with).
func ServiceAccountKey() (privatePEM, publicPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	privatePEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	publicPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	return privatePEM, publicPEM, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// WriteFiles writes name → content into dir with owner-only permissions.
func WriteFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
