package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pagelessWrites are the store's exported writes that change no cached page,
// each with the reason. Every other exported write must bump the scopes it
// changes (changePages / memberChanged in its writeTx, or bumpPageVersions):
// TestStoreWritesInvalidateTheirPages fails for a write that does neither,
// so a new write has to say which it is.
var pagelessWrites = map[string]string{
	// Accounts and sessions: no cached page carries a session or an address.
	"ChangePassword":       "a password is on no page",
	"ClaimLinkIcon":        "a link's icon is served at its own URL, not inside a page",
	"ConfirmEmailChange":   "an address is on no page",
	"CreateSession":        "sessions are on no page",
	"CreateUser":           "a new account has no posts or memberships yet",
	"CreateUserVerifying":  "a new account has no posts or memberships yet",
	"DeleteSession":        "sessions are on no page",
	"EndOtherSessions":     "sessions are on no page",
	"QueuePasswordReset":   "a reset mail is on no page",
	"RequestEmailChange":   "an address is on no page",
	"RequestPasswordReset": "a reset mail is on no page",
	"ResendVerification":   "a verification mail is on no page",
	"ResetPassword":        "a password is on no page",
	"TouchSession":         "sessions are on no page",
	"VerifyEmail":          "an address is on no page",
	"SetUserDisabled":      "ends sessions; a disabled member's posts stay as they were",
	"CreateDomainSignIn":   "a one-time sign-in code is on no page",
	"ExchangeDomainSignIn": "a one-time sign-in code is on no page",
	"StoredSecret":         "a server secret is on no page",
	"CheckDatabase":        "creates the database's generation secret on first use; a secret is on no page",
	"WatchDatabase":        "creates the database's generation secret on first use; a secret is on no page",
	"Prune":                "old notifications, push failures and expired sessions are on no cached page",
	"RequestAppExport":     "exports are the studio's and the member's own",
	"RequestExport":        "exports are the studio's and the member's own",
	"PrepareAppExport":     "exports are the studio's and the member's own",
	"PrepareExport":        "exports are the studio's and the member's own",
	"MailAppExport":        "exports are the studio's and the member's own",
	"MailExport":           "exports are the studio's and the member's own",
	"SetEmailDigest":       "preferences are the member's own settings page, never cached",
	"SetEmailPreferences":  "preferences are the member's own settings page, never cached",
	"UnsubscribeByToken":   "preferences are the member's own settings page, never cached",
	"NotePreview":          "the launch checklist is the studio's",
	"CountDownload":        "download counts are the buyer's own order page",
	"SaveLinkIcon":         "icons are served at their own URL, with their own cache headers",
	"CreateMedia":          "a fresh upload is on no page until a post or profile uses it",
	"MarkMediaUploaded":    "a fresh upload is on no page until a post or profile uses it",
	"SetMediaVariants":     "the media job renews the pages showing it once every size is recorded (server/jobs/media_variants.go)",
	"AddItemFile":          "an item's files are the buyer's downloads, not the item page",
	"AddItemUpload":        "an item's files are the buyer's downloads, not the item page",
	"FinishItemUpload":     "an item's files are the buyer's downloads, not the item page",
	"SaveUploadPart":       "an upload in progress is on no page",
	"SaveShippingZone":     "shipping rates show at checkout, which is the member's own",
	"DeleteShippingZone":   "shipping rates show at checkout, which is the member's own",
	"AddToCart":            "the cart is the member's own page, never cached",
	"ClearCart":            "the cart is the member's own page, never cached",
	"RemoveCartLine":       "the cart is the member's own page, never cached",
	"UpdateCartLine":       "the cart is the member's own page, never cached",
	"SetOrderShipping":     "an order's address is the buyer's own page",

	// Notifications, push and mail: delivered, not rendered into shared pages.
	"DeletePushSubscription":     "push subscriptions are on no page",
	"SavePushSubscription":       "push subscriptions are on no page",
	"RecordPushFailure":          "push failures are the operator's",
	"FanOut":                     "notifications are the member's own list, never cached",
	"MarkNotificationsRead":      "notifications are the member's own list, never cached",
	"SetNotificationPreferences": "preferences are the member's own settings page, never cached",
	"MarkMailSent":               "mail state is on no page",
	"QueueNewsletterTest":        "a test send is on no page",
	"SelectNewsletterRecipients": "a newsletter's recipients are the studio's",
	"SetRecipientState":          "a newsletter's recipients are the studio's",
	"SkipRecipient":              "a newsletter's recipients are the studio's",
	"ClaimRecipient":             "a newsletter's recipients are the studio's",
	"InterruptStale":             "a newsletter's recipients are the studio's",
	"QueueDigests":               "digests are mail",
	"Warn":                       "a warning is a notification to the member and a closed report",
	"CloseReports":               "the report queue is the studio's",
	"LogAction":                  "the moderation log is the studio's",

	// Money: ledgers, payouts and payments in flight are private pages and the
	// studio's. What a payment changes on shared pages (stock, a membership,
	// a donor's badge) is bumped by the transition that makes it.
	"ApplyTopupPaymentEvent":      "a wallet is the member's own",
	"AttachTopupPayment":          "a wallet is the member's own",
	"CreateTopup":                 "a wallet is the member's own",
	"CreateTopupLimited":          "a wallet is the member's own",
	"CreditMemberWallet":          "a wallet is the member's own",
	"CreditWallet":                "a wallet is the member's own",
	"ExpirePendingTopups":         "a wallet is the member's own",
	"Transfer":                    "ledger entries are on no shared page",
	"BookProcessorFee":            "fees are the studio's",
	"RecordFeeOwed":               "fees are the studio's",
	"AuditPayoutAction":           "payouts are the studio's",
	"SetAppFee":                   "fees are the operator's",
	"AttachStripeAccount":         "payouts are the studio's",
	"SetPayPalPayee":              "payouts are the studio's",
	"ApplyProviderUpgradeInvoice": "books an upgrade's invoice; the tier itself moved with the plan change",
	"ApplyPaymentEvent":           "records the event; the apply it runs in its writeTx pays or refunds through the order transitions, which bump",
	"RecordTopupFailure":          "a refused top-up is the member's own",
	"OpenPayPalTierChange":        "a PayPal tier change waiting for approval; the tier moves when it is paid or at the period end",
	"SetPayPalChangeApproval":     "a PayPal tier change waiting for approval; the tier moves when it is paid or at the period end",
	"SetPayPalChangeCharge":       "a PayPal tier change waiting for approval; the tier moves when it is paid or at the period end",
	"ReserveCardTrial":            "a card trial waiting for Stripe's Checkout; the trial starts (and bumps) when the card is saved",
	"CancelPendingCardTrial":      "a card trial whose Checkout expired never started: no page showed it",
	"SetCardTrialSession":         "a card trial waiting for Stripe's Checkout; the trial starts (and bumps) when the card is saved",
	"CreatePlanOrder":             "a pending membership order takes no stock and starts nothing",
	"CreateTierOrder":             "a pending membership order takes no stock and starts nothing",
	"CreateTierOrderWithOffer":    "a pending membership order takes no stock and starts nothing",
	"AttachPayment":               "a payment in flight changes no page",
	"AttachDonationPayment":       "a payment in flight changes no page",
	"CreateDonation":              "a pending donation; its payment brings the donor's badge (ApplyDonationEvent bumps)",
	"BeginRefund":                 "a refund in flight changes no page; the transition to refunded does",
	"SetProviderRef":              "a provider's reference is on no page",
	"SavePayPalCatalogID":         "PayPal's catalog ids are on no page",
	"ReserveUpgradeOffer":         "an offer code's redemption is the studio's",
	"ReleaseUpgradeOffer":         "an offer code's redemption is the studio's",
	"CreateOffer":                 "offer codes are given out by the creator, not shown on pages",
	"SetOfferActive":              "offer codes are given out by the creator, not shown on pages",
}

// TestStoreWritesInvalidateTheirPages reads the store's source: every
// transaction goes through writeTx (so the page versions a write bumps
// commit with it), and every exported method that writes either bumps a
// page scope somewhere on its way (directly, in a helper it calls, or in a
// function it hands on, like the order transitions' effects) or is listed
// in pagelessWrites with why no page shows what it changes.
func TestStoreWritesInvalidateTheirPages(t *testing.T) {
	g := parseStoreCalls(t)
	if len(g.runInTx) > 0 {
		t.Errorf("transactions outside writeTx (their page bumps would not commit with them): %v", g.runInTx)
	}
	var unmarked, stale []string
	for _, m := range g.exported {
		name := strings.TrimPrefix(m, "Storage.")
		writes := g.reaches(m, g.writes)
		bumps := g.reaches(m, g.bumps)
		_, listed := pagelessWrites[name]
		switch {
		case writes && !bumps && !listed:
			unmarked = append(unmarked, name)
		case listed && (!writes || bumps):
			stale = append(stale, name)
		}
	}
	for name := range pagelessWrites {
		if !slices.Contains(g.exported, "Storage."+name) {
			stale = append(stale, name)
		}
	}
	if len(unmarked) > 0 {
		t.Errorf("store writes that bump no page scope and are not in pagelessWrites (bump what they change in their writeTx, or list them with the reason): %v", unmarked)
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Errorf("pagelessWrites lists methods that no longer exist, do not write or do bump: %v", stale)
	}
	// The analysis itself: a write known to bump and one known not to.
	if !g.reaches("Storage.Follow", g.bumps) || !g.reaches("Storage.Follow", g.writes) {
		t.Error("the analysis misses Follow's write or its bump")
	}
	if g.reaches("Storage.CreateSession", g.bumps) {
		t.Error("the analysis finds a bump in CreateSession")
	}
}

type storeCalls struct {
	exported []string
	edges    map[string]map[string]bool
	writes   map[string]bool
	bumps    map[string]bool
	runInTx  []string
}

// parseStoreCalls builds the store's call graph from its source: functions
// and methods of *Storage, with an edge for every call or reference to
// another (a function handed on counts as called).
func parseStoreCalls(t *testing.T) *storeCalls {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	g := &storeCalls{edges: map[string]map[string]bool{}, writes: map[string]bool{}, bumps: map[string]bool{}}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				// A table of functions (the order effects): its name
				// reaches every function it holds.
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for _, name := range vs.Names {
						out := map[string]bool{}
						g.edges[name.Name] = out
						for _, v := range vs.Values {
							ast.Inspect(v, func(n ast.Node) bool {
								if id, ok := n.(*ast.Ident); ok {
									out[id.Name] = true
								}
								return true
							})
						}
					}
				}
				continue
			}
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			key, recv := fd.Name.Name, ""
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				typ := fd.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				id, ok := typ.(*ast.Ident)
				if !ok {
					continue
				}
				key = id.Name + "." + fd.Name.Name
				if id.Name == "Storage" && fd.Name.IsExported() {
					g.exported = append(g.exported, key)
				}
				if len(fd.Recv.List[0].Names) == 1 {
					recv = fd.Recv.List[0].Names[0].Name
				}
			}
			out := map[string]bool{}
			g.edges[key] = out
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					out[n.Name] = true // a package function called or handed on
				case *ast.SelectorExpr:
					switch n.Sel.Name {
					case "NewInsert", "NewUpdate", "NewDelete", "ExecContext":
						g.writes[key] = true
					case "RunInTx":
						if key != "Storage.writeTx" {
							g.runInTx = append(g.runInTx, key)
						}
					}
					if id, ok := n.X.(*ast.Ident); ok && recv != "" && id.Name == recv {
						out["Storage."+n.Sel.Name] = true
					}
				}
				return true
			})
		}
	}
	for _, bump := range []string{"Storage.bumpPageVersions", "Storage.announceBumps", "changePages"} {
		g.bumps[bump] = true
	}
	slices.Sort(g.exported)
	return g
}

// reaches reports whether fn, or a function it reaches, is in set. writeTx
// is not followed: it runs what it is given, which is in fn's own body.
func (g *storeCalls) reaches(fn string, set map[string]bool) bool {
	seen := map[string]bool{"Storage.writeTx": true}
	var walk func(string) bool
	walk = func(k string) bool {
		if set[k] {
			return true
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		for next := range g.edges[k] {
			if walk(next) {
				return true
			}
		}
		return false
	}
	return walk(fn)
}
