package server

import (
	"github.com/labstack/echo/v4"
)

// clientAddress is how both sites tell the client's address (rate limits,
// logs). Without TRUSTED_PROXIES it is the connection's peer. With them,
// Echo's X-Forwarded-For extractor walks the header from the right and
// stops at the first address outside the trusted ranges; loopback,
// link-local and private ranges are trusted only when configured, so a
// client cannot name itself.
func (s *Server) clientAddress() echo.IPExtractor {
	if len(s.cfg.TrustedProxies) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range s.cfg.TrustedProxies {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
