package store

// Models lists every bun table model in this package. The schema test checks
// each one against a freshly migrated database, so a model change without a
// matching migration fails there instead of in production.
func Models() []any {
	return []any{
		(*App)(nil), (*Community)(nil),
		(*User)(nil), (*Session)(nil), (*Membership)(nil),
		(*Media)(nil),
		(*Message)(nil), (*MessageAttachment)(nil), (*Reaction)(nil), (*Tag)(nil), (*MessageTag)(nil),
		(*Shop)(nil), (*StoreItem)(nil), (*StoreItemMedia)(nil), (*StoreItemTag)(nil), (*Variant)(nil),
		(*SubscriptionPlan)(nil), (*Subscription)(nil), (*Cart)(nil), (*CartItem)(nil),
		(*Order)(nil), (*OrderItem)(nil), (*Entitlement)(nil), (*ItemFile)(nil), (*ItemUpload)(nil), (*ItemUploadPart)(nil),
		(*WalletAccount)(nil), (*WalletTransfer)(nil), (*WalletEntry)(nil),
		(*Event)(nil), (*EventMedia)(nil), (*Attendee)(nil),
		(*Notification)(nil), (*PushSubscription)(nil), (*PushFailure)(nil), (*Donation)(nil), (*DonationTier)(nil),
		(*Link)(nil), (*Secret)(nil), (*JobOutbox)(nil), (*NotificationPreference)(nil),
		(*PaymentEvent)(nil), (*PageVersion)(nil), (*LinkIcon)(nil),
		(*Report)(nil), (*Ban)(nil), (*ModerationEntry)(nil),
		(*Mail)(nil), (*AccountToken)(nil), (*DataExport)(nil), (*PayoutAccount)(nil),
		(*WalletTopup)(nil), (*PayPalPayee)(nil), (*PlatformFeeOwed)(nil), (*RoleChange)(nil),
		(*NewsletterRecipient)(nil), (*MailBounce)(nil), (*NewsletterPace)(nil),
		(*ShippingZone)(nil), (*ShippingZoneCountry)(nil), (*AppExport)(nil),
		(*Trial)(nil), (*Offer)(nil), (*OfferRedemption)(nil), (*CardTrial)(nil),
		(*AppDomain)(nil), (*DomainSignIn)(nil), (*PayPalCatalog)(nil), (*PayPalTierChange)(nil),
	}
}
