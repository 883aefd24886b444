// Command fakepaypal serves paymentstest's fake PayPal (OAuth, Orders v2,
// captures, refunds, verify-webhook-signature and the buyer's approval page)
// as a process, for browser tests that run bin/marquee against it with
// PAYPAL_API_BASE; with -stripe, the fake Stripe API too (STRIPE_API_BASE).
// It is a test double, never part of the product binary.
//
//	go run ./scripts/fakepaypal -addr 127.0.0.1:0 -webhook-url http://localhost:3000/api/webhooks/paypal
//
// The first line it prints is the base URL it listens on.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"marquee/server/payments/paymentstest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	clientID := flag.String("client-id", "fake-client", "accepted PAYPAL_CLIENT_ID")
	clientSecret := flag.String("client-secret", "fake-secret", "accepted PAYPAL_CLIENT_SECRET")
	webhookID := flag.String("webhook-id", "WH-FAKE", "PAYPAL_WEBHOOK_ID the signature check expects")
	webhookURL := flag.String("webhook-url", "", "where to deliver events (empty: none)")
	withStripe := flag.Bool("stripe", false, "also serve the fake Stripe API; its URL is the second line printed")
	stripeSecret := flag.String("stripe-webhook-secret", "whsec_fake", "STRIPE_WEBHOOK_SECRET the fake Stripe signs events with")
	stripeWebhookURL := flag.String("stripe-webhook-url", "", "where the fake Stripe delivers events (empty: none)")
	connectSecret := flag.String("stripe-connect-webhook-secret", "whsec_connect_fake", "STRIPE_CONNECT_WEBHOOK_SECRET the fake Stripe signs Connect events with")
	connectWebhookURL := flag.String("stripe-connect-webhook-url", "", "where the fake Stripe delivers Connect events (empty: none)")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	pp := paymentstest.NewPayPal(*clientID, *clientSecret, *webhookID)
	pp.URL = "http://" + ln.Addr().String()
	pp.WebhookURL = *webhookURL
	fmt.Println(pp.URL)
	if *withStripe {
		sln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		fs := paymentstest.NewStripe(*stripeSecret)
		fs.URL, fs.WebhookURL = "http://"+sln.Addr().String(), *stripeWebhookURL
		fs.ConnectWebhookSecret, fs.ConnectWebhookURL = *connectSecret, *connectWebhookURL
		fmt.Println(fs.URL)
		go func() { _ = http.Serve(sln, fs) }()
	}
	os.Stdout.Sync()
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
		<-stop
		ln.Close()
	}()
	if err := http.Serve(ln, pp); err != nil && !errors.Is(err, net.ErrClosed) {
		log.Fatal(err)
	}
}
