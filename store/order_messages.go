package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// Money formats cents as the store shows them ($12.50; other currencies
// with their code).
func Money(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	s := sign + strconv.FormatInt(cents/100, 10) + "." + fmt.Sprintf("%02d", cents%100)
	switch strings.ToUpper(currency) {
	case "", "USD":
		return "$" + s
	case "EUR":
		return "€" + s
	case "GBP":
		return "£" + s
	}
	return s + " " + strings.ToUpper(currency)
}

// orderMessages tells the buyer (and, for a new paid order, the app's
// creator and admins) what happened to an order, in the app and by e-mail,
// in the transaction that moved it. Each message has a key made of the
// order and the status, so a transition reported twice mails once.
func orderMessages(ctx context.Context, tx bun.Tx, o *Order, to string) error {
	var app struct {
		Name string `bun:"name"`
	}
	if err := tx.NewSelect().Table("apps").Column("name").Where("id = ?", o.AppID).Scan(ctx, &app); err != nil {
		return fmt.Errorf("order message: load app: %w", err)
	}
	orderPath := "/apps/" + app.Name + "/orders/" + o.ID
	total := Money(o.Total, o.Currency)
	var text string
	var mail MailContent
	switch to {
	case OrderPaid:
		lines, err := receiptRows(ctx, tx, o)
		if err != nil {
			return err
		}
		text = "Thank you! Order " + o.OrderNumber + " is paid: " + total + "."
		mail = MailContent{Subject: "Your receipt for order " + o.OrderNumber, Heading: "Thank you for your order",
			Paragraphs: []string{"Order " + o.OrderNumber + " is paid" + paidWith(o) + "."},
			Rows:       lines.rows, Action: &MailLink{Label: "View your order", Path: orderPath}}
		if addr := shippingText(o.ShippingAddress); addr != "" {
			mail.Paragraphs = append(mail.Paragraphs, "Shipping to: "+addr)
		}
		if lines.downloads {
			mail.Links = append(mail.Links, MailLink{Label: "Download your files", Path: orderPath})
		}
		if err := staffNewOrder(ctx, tx, o, app.Name, total); err != nil {
			return err
		}
	case OrderShipped:
		text = "Order " + o.OrderNumber + " has shipped."
		mail = MailContent{Subject: "Order " + o.OrderNumber + " has shipped", Heading: "Your order is on its way",
			Paragraphs: []string{"Order " + o.OrderNumber + " has shipped."}, Action: &MailLink{Label: "View your order", Path: orderPath}}
		if o.TrackingNumber != "" {
			text += " Tracking number: " + o.TrackingNumber + "."
			mail.Rows = []MailRow{{Label: "Tracking number", Value: o.TrackingNumber, Strong: true}}
		}
	case OrderDelivered:
		text = "Order " + o.OrderNumber + " was delivered."
		mail = MailContent{Subject: "Order " + o.OrderNumber + " was delivered", Heading: "Delivered",
			Paragraphs: []string{"Order " + o.OrderNumber + " was delivered. Enjoy!"}, Action: &MailLink{Label: "View your order", Path: orderPath}}
	case OrderRefunded:
		amount := o.RefundedAmount
		if amount == 0 {
			amount = o.Total
		}
		text = "Order " + o.OrderNumber + " was refunded: " + Money(amount, o.Currency) + "."
		mail = MailContent{Subject: "Refund for order " + o.OrderNumber, Heading: "Your order was refunded",
			Paragraphs: []string{"Order " + o.OrderNumber + " was refunded" + paidWith(o) + "."},
			Rows:       []MailRow{{Label: "Refunded", Value: Money(amount, o.Currency), Strong: true}},
			Action:     &MailLink{Label: "View your order", Path: orderPath}}
		if o.RefundReason != "" {
			text += " Reason: " + o.RefundReason
			mail.Rows = append(mail.Rows, MailRow{Label: "Reason", Value: o.RefundReason})
		}
	case OrderCancelled:
		text = "Order " + o.OrderNumber + " was cancelled."
		mail = MailContent{Subject: "Order " + o.OrderNumber + " was cancelled", Heading: "Your order was cancelled",
			Paragraphs: []string{"Order " + o.OrderNumber + " (" + total + ") was cancelled before it was paid, so nothing was charged. Its items are back in the store."},
			Action:     &MailLink{Label: "View your order", Path: orderPath}}
	default:
		return nil
	}
	if _, err := Notify(ctx, tx, Notice{AppID: o.AppID, Kind: KindOrderStatus, RecipientIDs: []string{o.UserID}, Text: text,
		Link: "/orders/" + o.ID, Source: "order:" + o.ID + ":" + to}); err != nil {
		return err
	}
	_, err := MailMember(ctx, tx, OutgoingMail{Key: "order:" + o.ID + ":" + to, Kind: KindOrderStatus, AppID: o.AppID,
		UserID: o.UserID, Transactional: to == OrderPaid || to == OrderRefunded, Content: mail})
	return err
}

// partialRefundMessage tells the buyer of money given back while the order
// keeps its status (a partial refund).
func partialRefundMessage(ctx context.Context, tx bun.Tx, o *Order, amount int64) error {
	text := "A refund of " + Money(amount, o.Currency) + " for order " + o.OrderNumber + " is on its way."
	if o.RefundReason != "" {
		text += " Reason: " + o.RefundReason
	}
	if _, err := Notify(ctx, tx, Notice{AppID: o.AppID, Kind: KindOrderStatus, RecipientIDs: []string{o.UserID}, Text: text,
		Link: "/orders/" + o.ID}); err != nil {
		return err
	}
	rows := []MailRow{{Label: "Refunded", Value: Money(amount, o.Currency), Strong: true},
		{Label: "Refunded so far", Value: Money(o.RefundedAmount, o.Currency) + " of " + Money(o.Total, o.Currency)}}
	if o.RefundReason != "" {
		rows = append(rows, MailRow{Label: "Reason", Value: o.RefundReason})
	}
	_, err := MailMember(ctx, tx, OutgoingMail{Key: "order:" + o.ID + ":refund:" + strconv.FormatInt(o.RefundedAmount, 10),
		Kind: KindOrderStatus, AppID: o.AppID, UserID: o.UserID, Transactional: true, Content: MailContent{
			Subject: "Partial refund for order " + o.OrderNumber, Heading: "Part of your order was refunded",
			Paragraphs: []string{text}, Rows: rows}})
	return err
}

type receipt struct {
	rows      []MailRow
	downloads bool
}

func receiptRows(ctx context.Context, tx bun.Tx, o *Order) (receipt, error) {
	var items []OrderItem
	if err := tx.NewSelect().Model(&items).Where("order_id = ?", o.ID).Order("id").Scan(ctx); err != nil {
		return receipt{}, fmt.Errorf("receipt: load lines: %w", err)
	}
	var r receipt
	for _, it := range items {
		r.rows = append(r.rows, MailRow{Label: it.Name + " × " + strconv.FormatInt(it.Quantity, 10), Value: Money(it.Price*it.Quantity, it.Currency)})
		if it.Type == ItemDigital {
			r.downloads = true
		}
	}
	r.rows = append(r.rows, MailRow{Label: "Subtotal", Value: Money(o.Subtotal, o.Currency)})
	if o.PlatformFee > 0 {
		r.rows = append(r.rows, MailRow{Label: "Platform fee", Value: Money(o.PlatformFee, o.Currency)})
	}
	r.rows = append(r.rows, MailRow{Label: "Total", Value: Money(o.Total, o.Currency), Strong: true})
	return r, nil
}

func paidWith(o *Order) string {
	switch o.PaymentMethod {
	case "musepay":
		return " from your wallet"
	case "stripe":
		return " by card"
	case "paypal":
		return " with PayPal"
	}
	return ""
}

func shippingText(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return ""
	}
	var a ShippingAddress
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return ""
	}
	parts := []string{strings.TrimSpace(a.FirstName + " " + a.LastName), a.Address, strings.TrimSpace(a.City + " " + a.State + " " + a.ZipCode), a.Country}
	var out []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return strings.Join(out, ", ")
}

// staffNewOrder tells the creator and admins of a paid order to fulfil.
func staffNewOrder(ctx context.Context, tx bun.Tx, o *Order, appName, total string) error {
	var buyer string
	_ = tx.NewSelect().Table("users").Column("username").Where("id = ?", o.UserID).Scan(ctx, &buyer)
	text := "New order " + o.OrderNumber + " from @" + buyer + ": " + total + "."
	staff, err := staffOf(ctx, tx, o.AppID)
	if err != nil {
		return err
	}
	if _, err := Notify(ctx, tx, Notice{AppID: o.AppID, Kind: KindNewOrder, RecipientIDs: staff, SenderID: o.UserID, Text: text,
		Link: "/manage/orders"}); err != nil {
		return err
	}
	for _, uid := range staff {
		if uid == o.UserID {
			continue
		}
		if _, err := MailMember(ctx, tx, OutgoingMail{Key: "order:" + o.ID + ":staff:" + uid, Kind: KindNewOrder, AppID: o.AppID, UserID: uid,
			Content: MailContent{Subject: "New order " + o.OrderNumber, Heading: "New order to fulfil", Paragraphs: []string{text},
				Action: &MailLink{Label: "Open orders", Path: "/apps/" + appName + "/manage/orders"}}}); err != nil {
			return err
		}
	}
	return nil
}

// staffOf lists the creator and admins of an app.
func staffOf(ctx context.Context, db bun.IDB, appID string) ([]string, error) {
	var ids []string
	if err := db.NewSelect().Table("memberships").Column("user_id").Where("app_id = ? AND role IN (?)", appID,
		bun.List([]string{RoleCreator, RoleAdmin})).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("load staff: %w", err)
	}
	return ids, nil
}
