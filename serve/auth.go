package serve

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/predictor"
)

// ReadTokens reads bearer tokens from a file: one per line; blank lines
// and lines starting with # are skipped, spaces around a token dropped.
// A file with no token is an error (it would lock every client out), as
// is a token shorter than 16 bytes (too easy to guess).
func ReadTokens(path string) ([]string, error) {
	f, err := atomicfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	var tokens []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if len(t) < 16 {
			return nil, fmt.Errorf("token file %s, line %d: a token of %d bytes is too short; use at least 16 (e.g. openssl rand -hex 32)", path, line, len(t))
		}
		tokens = append(tokens, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("token file %s: no token in it", path)
	}
	return tokens, nil
}

// tokenSet holds the SHA-256 of each accepted token: a presented token is
// hashed and compared with every one in constant time, so neither the
// comparison nor the number of matching bytes can be timed.
type tokenSet [][sha256.Size]byte

func newTokenSet(tokens []string) tokenSet {
	s := make(tokenSet, len(tokens))
	for i, t := range tokens {
		s[i] = sha256.Sum256([]byte(t))
	}
	return s
}

func (s tokenSet) accepts(token string) bool {
	h := sha256.Sum256([]byte(token))
	ok := 0
	for i := range s {
		ok |= subtle.ConstantTimeCompare(h[:], s[i][:])
	}
	return ok == 1
}

// authorize wraps h so that it answers only requests with an accepted
// "Authorization: Bearer TOKEN" header; others get 401.
func (s *Server) authorize(h http.Handler) http.Handler {
	if len(s.tokens) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		const prefix = "Bearer "
		if len(auth) < len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) || !s.tokens.accepts(strings.TrimSpace(auth[len(prefix):])) {
			s.met.unauthorized.Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="rfm"`)
			writeError(w, &httpError{http.StatusUnauthorized, "a valid bearer token is required: send Authorization: Bearer TOKEN"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loadTLS reads the certificate and key for Serve.
func loadTLS(cert, key string) (*tls.Config, error) {
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("TLS needs both a certificate and its key (got only one)")
	}
	if cert == "" {
		return nil, nil
	}
	for _, p := range []string{cert, key} {
		f, err := atomicfile.OpenRegular(p)
		if err != nil {
			return nil, fmt.Errorf("TLS: %w", err)
		}
		f.Close()
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// exposed reports whether a listener's address reaches beyond this
// machine (not a loopback address, or every interface).
func exposed(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return false // a unix socket
	}
	return !tcp.IP.IsLoopback()
}

// warnIfExposed logs a warning when the server listens beyond loopback
// without TLS or without tokens.
func (s *Server) warnIfExposed(addr net.Addr) {
	if !exposed(addr) {
		return
	}
	var missing []string
	if s.tls == nil {
		missing = append(missing, "TLS (--tls-cert, --tls-key): requests and answers cross the network in clear")
	}
	if len(s.tokens) == 0 {
		missing = append(missing, "authentication (--auth-tokens): anyone who can connect may predict and read the model's description")
	}
	if len(missing) > 0 {
		s.log.Warn("listening beyond this machine without "+strings.Join(missing, "; and without "), "addr", addr.String())
	}
}

// schemaChange says how next differs from cur in what clients send and
// get: the task, the input columns (names and kinds, in any order) and the
// classes. "" when they agree.
func schemaChange(cur, next *predictor.Model) string {
	if a, b := cur.Task(), next.Task(); a != b {
		return fmt.Sprintf("the task changes from %s to %s", a, b)
	}
	cols := func(m *predictor.Model) []string {
		var out []string
		for _, in := range m.Inputs() {
			out = append(out, fmt.Sprintf("%q (%s)", in.Name, in.Kind))
		}
		slices.Sort(out)
		return out
	}
	if a, b := cols(cur), cols(next); !slices.Equal(a, b) {
		return fmt.Sprintf("the input columns change from %s to %s", clipMessage(strings.Join(a, ", ")), clipMessage(strings.Join(b, ", ")))
	}
	if a, b := cur.Classes(), next.Classes(); !slices.Equal(a, b) {
		return fmt.Sprintf("the classes change from %q to %q", a, b)
	}
	return ""
}
