package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"marquee/store"
)

// acmeTLS obtains and renews the certificates of verified custom domains
// (issue 42 item 4, TLS_ACME=true) with certmagic: on demand, at the first
// handshake for a name, and only for a name VerifiedDomain knows (every
// other name, the main and auth hosts included, gets no certificate: those
// have their own or sit behind a proxy). Certificates, keys and the ACME
// account live in the database (store.ACMEStorage), so every instance
// serves what one of them obtained, and a challenge one instance started
// is answered by whichever instance the CA reaches. HTTP-01 is answered on
// the main site's listener (port 80 must reach PORT), TLS-ALPN-01 on the
// HTTPS listener (443 must reach TLS_ADDR).
type acmeTLS struct {
	cache  *certmagic.Cache
	magic  *certmagic.Config
	issuer *certmagic.ACMEIssuer
	answer *certmagic.ACMEIssuer
}

func (s *Server) newACME() *acmeTLS {
	zl := zapToSlog(s.logger)
	a := &acmeTLS{}
	a.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return a.magic, nil },
		Logger:           zl,
	})
	a.magic = certmagic.New(a.cache, certmagic.Config{
		Storage: &store.ACMEStorage{DB: s.store.DB()},
		Logger:  zl,
		OnDemand: &certmagic.OnDemandConfig{DecisionFunc: func(ctx context.Context, name string) error {
			if _, ok := s.VerifiedDomain(ctx, name); !ok {
				return fmt.Errorf("%q is not a verified custom domain", name)
			}
			return nil
		}},
	})
	_, tlsPort, _ := net.SplitHostPort(s.cfg.TLSAddr)
	alpnPort, _ := strconv.Atoi(tlsPort)
	// The Alt ports are the ones this process already listens on: certmagic
	// finds them taken and leaves the challenges to HTTPChallengeHandler
	// and the HTTPS listener's GetCertificate.
	template := certmagic.ACMEIssuer{
		CA:             s.cfg.ACMECA,
		Email:          s.cfg.ACMEEmail,
		Agreed:         true,
		TrustedRoots:   s.cfg.ACMECARoots,
		ListenHost:     s.cfg.BindAddress,
		AltHTTPPort:    s.cfg.Port,
		AltTLSALPNPort: alpnPort,
		Logger:         zl,
	}
	// answer answers HTTP-01 on the main listener, for a challenge this
	// instance or another began, even when tests leave this instance's
	// orders one challenge type (acmeOnly).
	a.answer = certmagic.NewACMEIssuer(a.magic, template)
	template.DisableHTTPChallenge = s.cfg.acmeOnly == "tls-alpn-01"
	template.DisableTLSALPNChallenge = s.cfg.acmeOnly == "http-01"
	a.issuer = certmagic.NewACMEIssuer(a.magic, template)
	a.magic.Issuers = []certmagic.Issuer{a.issuer}
	return a
}

// tlsConfig serves HTTP/2 and HTTP/1.1, and answers TLS-ALPN-01.
func (a *acmeTLS) tlsConfig() *tls.Config {
	c := a.magic.TLSConfig()
	c.NextProtos = append([]string{"h2", "http/1.1"}, c.NextProtos...)
	c.MinVersion = tls.VersionTLS12
	return c
}

// zapToSlog passes certmagic's log lines (zap) to the server's logger.
func zapToSlog(l *slog.Logger) *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zapcore.EncoderConfig{MessageKey: "msg", NameKey: "logger", LevelKey: "level",
		EncodeLevel: zapcore.LowercaseLevelEncoder})
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(slogWriter{l}), zap.InfoLevel))
}

type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Info("acme", "log", strings.TrimSpace(string(p)))
	return len(p), nil
}
