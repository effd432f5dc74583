package serve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certPath, keyPath string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rfm test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certPath, keyPath, pool
}

func do(t *testing.T, c *http.Client, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// Over TLS with tokens: a client that trusts the certificate and sends a
// token predicts; without a token, or with a wrong one, it gets 401;
// plain HTTP gets no answer; the probes stay open unless AuthProbes.
func TestTLSAndTokens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.rfm")
	writeModel(t, path, 300, 1, false)
	certPath, keyPath, pool := selfSigned(t, dir)
	tokPath := filepath.Join(dir, "tokens")
	good := "0123456789abcdef0123456789abcdef"
	os.WriteFile(tokPath, []byte("# clients\n\n"+good+"\n  fedcba9876543210fedcba9876543210  \n"), 0o600)
	tokens, err := ReadTokens(tokPath)
	if err != nil || len(tokens) != 2 || tokens[1] != "fedcba9876543210fedcba9876543210" {
		t.Fatalf("ReadTokens: %q %v", tokens, err)
	}
	ts := startServer(t, Options{ModelPath: path, TLSCertFile: certPath, TLSKeyFile: keyPath, Tokens: tokens})
	url := strings.Replace(ts.url, "http://", "https://", 1)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	row := `[{"x1": 0.5, "x2": 1, "color": "red"}]`
	if code, b := do(t, c, "POST", url+"/v1/predict", good, row); code != 200 {
		t.Errorf("with a token: %d %s", code, b)
	}
	if code, b := do(t, c, "POST", url+"/v1/predict", tokens[1], row); code != 200 {
		t.Errorf("with the second token: %d %s", code, b)
	}
	for _, tok := range []string{"", good[:31], good + "x", "wrong-token-of-some-length"} {
		if code, b := do(t, c, "POST", url+"/v1/predict", tok, row); code != 401 || !strings.Contains(b, "bearer token") {
			t.Errorf("token %q: %d %s, want 401", tok, code, b)
		}
	}
	if code, _ := do(t, c, "GET", url+"/v1/model", "", ""); code != 401 {
		t.Errorf("/v1/model without a token: %d", code)
	}
	if code, _ := do(t, c, "GET", url+"/healthz", "", ""); code != 200 {
		t.Errorf("/healthz without a token: %d", code)
	}
	if code, _ := do(t, http.DefaultClient, "GET", ts.url+"/healthz", "", ""); code == 200 {
		t.Error("plain HTTP was answered")
	}
	if code, b := do(t, c, "GET", url+"/metrics", "", ""); code != 200 || !strings.Contains(b, "rfm_requests_unauthorized_total 5") {
		t.Errorf("metrics: %d, want 5 refusals counted", code)
	}

	ts2 := startServer(t, Options{ModelPath: path, Tokens: tokens, AuthProbes: true})
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, _ := do(t, http.DefaultClient, "GET", ts2.url+p, "", ""); code != 401 {
			t.Errorf("%s with AuthProbes and no token: %d", p, code)
		}
		if code, _ := do(t, http.DefaultClient, "GET", ts2.url+p, good, ""); code != 200 {
			t.Errorf("%s with AuthProbes and a token: %d", p, code)
		}
	}

	for _, c := range []struct{ text, want string }{
		{"", "no token"}, {"# only a comment\n", "no token"}, {"short\n", "too short"},
	} {
		os.WriteFile(tokPath, []byte(c.text), 0o600)
		if _, err := ReadTokens(tokPath); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("token file %q: %v", c.text, err)
		}
	}
	if _, err := New(Options{ModelPath: path, TLSCertFile: certPath}); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("a certificate without a key: %v", err)
	}
}

// Listening on every interface without TLS and tokens is warned about;
// /v1/model shows no file path.
func TestExposedWarningAndNoPaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret-dir-name", "m.rfm")
	os.MkdirAll(filepath.Dir(path), 0o755)
	writeModel(t, path, 300, 1, false)
	logs := &syncBuffer{}
	s, err := New(Options{ModelPath: path, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	s.warnIfExposed(ln.Addr())
	ln.Close()
	s.Close()
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "without TLS") || !strings.Contains(l, "authentication") {
		t.Errorf("no warning for every interface:\n%s", l)
	}
	ts := startServer(t, Options{ModelPath: path})
	if strings.Contains(ts.logs.String(), "WARN") {
		t.Errorf("a warning on loopback:\n%s", ts.logs.String())
	}
	code, b := do(t, http.DefaultClient, "GET", ts.url+"/v1/model", "", "")
	if code != 200 || strings.Contains(b, "secret-dir-name") || strings.Contains(b, `"file"`) {
		t.Errorf("/v1/model shows a path: %d %s", code, b)
	}
}

// A reload that would change the task or the inputs is refused (logged,
// counted), unless AllowSchemaChange.
func TestReloadRefusesSchemaChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.rfm")
	writeModel(t, path, 300, 1, false)
	reg := filepath.Join(dir, "reg.rfm")
	writeModel(t, reg, 300, 2, true)
	b, _ := os.ReadFile(reg)
	ts := startServer(t, Options{ModelPath: path})
	first := ts.Model().Checksum
	writeAtomic(t, path, b)
	if err := ts.Reload(); err == nil || !strings.Contains(err.Error(), "the task changes from classification to regression") {
		t.Fatalf("Reload: %v", err)
	}
	if ts.Model().Checksum != first {
		t.Error("the model changed")
	}
	if v := metricValue(t, ts.url, `rfm_model_reloads_total{result="refused"}`); v != 1 {
		t.Errorf("refused reloads counted: %v", v)
	}
	if v := metricValue(t, ts.url, "rfm_model_last_reload_failed"); v != 1 {
		t.Errorf("rfm_model_last_reload_failed = %v", v)
	}
	if !strings.Contains(ts.logs.String(), "reload refused") {
		t.Errorf("not logged:\n%s", ts.logs.String())
	}

	path2 := filepath.Join(dir, "m2.rfm")
	writeModel(t, path2, 300, 1, false)
	ts2 := startServer(t, Options{ModelPath: path2, AllowSchemaChange: true})
	writeAtomic(t, path2, b)
	if err := ts2.Reload(); err != nil {
		t.Fatalf("Reload with AllowSchemaChange: %v", err)
	}
	if ts2.Model().Task() != "regression" {
		t.Errorf("task %s after the allowed change", ts2.Model().Task())
	}
}
