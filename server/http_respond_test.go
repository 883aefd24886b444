package server

import (
	"encoding/json"
	"testing"

	"marquee/store"
)

// The answers that were fields{} maps keep their bytes as structs: data's
// members in the order of their names, and the SPEC-named ones (posts,
// pagination, publicKey...) answered at the top level too, only for the
// structs that embed atTop.
func TestAnswersKeepTheirJSON(t *testing.T) {
	p := store.NewPagination(1, 20, 0)
	cases := []struct {
		name string
		got  any
		want string
	}{
		{
			name: "a page of posts",
			got:  envelopeOf(PostsPage{Pagination: p, Posts: []store.MessageView{}}, &p, ""),
			want: `{"data":{"pagination":{"page":1,"limit":20,"total":0,"totalPages":0,"hasNext":false,"hasPrev":false},"posts":[]},` +
				`"pagination":{"page":1,"limit":20,"total":0,"totalPages":0,"hasNext":false,"hasPrev":false},"posts":[],"success":true}`,
		},
		{
			name: "the public key",
			got:  envelopeOf(VapidKey{PublicKey: "k"}, nil, ""),
			want: `{"data":{"publicKey":"k"},"publicKey":"k","success":true}`,
		},
		{
			name: "a PayPal order, with a message",
			got:  envelopeOf(PayPalOrderCreated{ApprovalURL: "u", OrderID: "o", PayPalOrderID: "pp", Status: "CREATED"}, nil, "m"),
			want: `{"approvalUrl":"u","data":{"approvalUrl":"u","orderId":"o","paypalOrderId":"pp","status":"CREATED"},"message":"m","paypalOrderId":"pp","success":true}`,
		},
		{
			name: "a card's confirm: its payment id in data only",
			got:  envelopeOf(PaymentConfirmed{OrderID: "o", OrderNumber: "N1", OrderStatus: "PAID", PaymentIntentID: "pi", Status: "succeeded"}, nil, "ok"),
			want: `{"data":{"orderId":"o","orderNumber":"N1","orderStatus":"PAID","paymentIntentId":"pi","status":"succeeded"},"message":"ok","success":true}`,
		},
		{
			name: "PayPal's capture: its order id at the top level too",
			got:  envelopeOf(PaymentConfirmed{OrderID: "o", OrderNumber: "N1", OrderStatus: "PAID", PayPalOrderID: "pp", Status: "COMPLETED"}, nil, "ok"),
			want: `{"data":{"orderId":"o","orderNumber":"N1","orderStatus":"PAID","paypalOrderId":"pp","status":"COMPLETED"},"message":"ok","paypalOrderId":"pp","success":true}`,
		},
		{
			name: "nothing at the top level",
			got:  envelopeOf(NotificationsMarked{Marked: 2, UnreadCount: 1}, nil, "done"),
			want: `{"success":true,"data":{"marked":2,"unreadCount":1},"message":"done"}`,
		},
		{
			name: "a webhook about an order",
			got:  envelopeOf(WebhookReceived{OrderID: "o", OrderStatus: "PAID", Received: true, Status: "ok"}, nil, ""),
			want: `{"success":true,"data":{"orderId":"o","orderStatus":"PAID","received":true,"status":"ok"}}`,
		},
	}
	for _, tc := range cases {
		b, err := json.Marshal(tc.got)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, b, tc.want)
		}
	}
}
