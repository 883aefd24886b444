package seed

import (
	"context"

	"marquee/store"
)

// DemoWalletCredit is what every demo member finds in their wallet: enough
// to buy a few things with the wallet method ($100.00).
const DemoWalletCredit = 10000

// DemoWelcomeCredit is what a member who joins the demo app later finds in
// their wallet (the app's wallet.welcomeCredit setting, $50.00).
const DemoWelcomeCredit = 5000

// demoWallets credits the demo app's members through the ledger, so the
// money has an EXTERNAL counter-entry like any other top-up.
func (s *seeder) demoWallets(ctx context.Context, app *store.App) error {
	for _, su := range demoUsers {
		if su.role == "" {
			continue
		}
		u := s.user(su.username)
		if _, _, err := store.TransferTx(ctx, s.tx, store.TransferInput{AppID: app.ID, Reference: "seed:wallet:" + u.ID,
			Kind: store.TransferCredit, From: store.OutsideMoney, To: store.Member(u.ID), Amount: DemoWalletCredit,
			Memo: "Welcome credit"}); err != nil {
			return err
		}
	}
	return nil
}
