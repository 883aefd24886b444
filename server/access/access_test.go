package access

import (
	"testing"

	"marquee/store"
)

// flag names in the order of the table columns below.
var columns = []string{"post", "story", "event", "moderate", "manage", "store", "manageStore", "feature",
	"comment", "react", "upload", "follow", "unfollow", "join", "donate", "notify", "search"}

func flagsRow(f Flags) []bool {
	return []bool{f.CanPost, f.CanCreateStories, f.CanCreateEvents, f.CanModerate, f.CanManage, f.CanAccessStore,
		f.CanManageStore, f.CanFeature, f.CanComment, f.CanReact, f.CanUpload, f.CanFollow, f.CanUnfollow,
		f.CanJoinEvents, f.CanDonate, f.CanNotifications, f.CanSearch}
}

const (
	y = true
	n = false
)

// TestFlagsByRole is SPEC.md section 6 written out by hand for an app with
// default settings plus donations on: every role x every action. It never
// calls a production rule to compute what it expects.
func TestFlagsByRole(t *testing.T) {
	settings := store.DefaultSettings("t")
	settings.Features.Donations.Enabled = true
	table := []struct {
		role string
		want []bool
	}{
		//                post story event mod manage store mStore feat comment react upload follow unfollow join donate notify search
		{Public, []bool{n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n}},
		{Authenticated, []bool{n, n, n, n, n, n, n, n, n, n, n, y, n, n, y, n, y}},
		{Follower, []bool{n, n, n, n, n, y, n, n, y, y, y, n, y, y, y, y, y}},
		{Subscriber, []bool{n, n, n, n, n, y, n, n, y, y, y, n, n, y, y, y, y}},
		{Moderator, []bool{n, n, n, y, n, y, n, n, y, y, y, n, n, y, y, y, y}},
		{Admin, []bool{n, n, n, y, y, y, y, y, y, y, y, n, n, y, y, y, y}},
		{Creator, []bool{y, y, y, y, y, y, y, y, y, y, y, n, n, y, y, y, y}},
	}
	check(t, "default", settings, table)
}

// TestFlagsFollowSettings: create_permission, allowComments, allowReactions
// and the feature switches change the flags.
func TestFlagsFollowSettings(t *testing.T) {
	s := store.DefaultSettings("t")
	s.Features.Community.Settings.ContentSettings.CreatePermission = "SUBSCRIBER"
	s.Features.Events.Settings.ContentSettings.CreatePermission = "MODERATOR"
	s.Features.Community.Settings.AllowComments = false
	s.Features.Store.Enabled = false
	check(t, "open posting, comments and store off", s, []struct {
		role string
		want []bool
	}{
		//                post story event mod manage store mStore feat comment react upload follow unfollow join donate notify search
		{Public, []bool{n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n}},
		{Follower, []bool{n, n, n, n, n, n, n, n, n, y, y, n, y, y, n, y, y}},
		{Subscriber, []bool{y, y, n, n, n, n, n, n, n, y, y, n, n, y, n, y, y}},
		{Moderator, []bool{y, y, y, y, n, n, n, n, n, y, y, n, n, y, n, y, y}},
		{Creator, []bool{y, y, y, y, y, n, n, y, n, y, y, n, n, y, n, y, y}},
	})
	off := store.DefaultSettings("t")
	off.Features.Community.Enabled = false
	off.Features.Events.Enabled = false
	off.Features.Community.Settings.ContentSettings.CreatePermission = "bogus" // unknown means CREATOR
	check(t, "community and events off", off, []struct {
		role string
		want []bool
	}{
		{Creator, []bool{n, n, n, y, y, y, y, y, n, n, y, n, n, n, n, y, y}},
	})
}

func check(t *testing.T, name string, settings store.AppSettings, table []struct {
	role string
	want []bool
}) {
	t.Helper()
	for _, row := range table {
		got := flagsRow(For(settings, row.role))
		for i := range columns {
			if got[i] != row.want[i] {
				t.Errorf("%s: %s %s = %v, want %v", name, row.role, columns[i], got[i], row.want[i])
			}
		}
	}
}

// TestRules covers the per-object questions.
func TestRules(t *testing.T) {
	type q struct {
		name string
		got  bool
		want bool
	}
	for _, c := range []q{
		{"author deletes own", CanDeleteMessage(Follower, true), y},
		{"visitor 'author' deletes", CanDeleteMessage(Public, true), n},
		{"follower deletes other's", CanDeleteMessage(Follower, false), n},
		{"subscriber deletes other's", CanDeleteMessage(Subscriber, false), n},
		{"moderator deletes other's", CanDeleteMessage(Moderator, false), y},
		{"host edits event", CanEditEvent(Follower, true), y},
		{"moderator edits others' event", CanEditEvent(Moderator, false), n},
		{"admin edits any event", CanEditEvent(Admin, false), y},
		{"event moderator manages attendees", CanManageAttendees(Follower, "MODERATOR"), y},
		{"attendee manages attendees", CanManageAttendees(Follower, "ATTENDEE"), n},
		{"app moderator manages attendees", CanManageAttendees(Moderator, ""), y},
		{"admin's events are official", MakesOfficialEvents(Admin), y},
		{"moderator's events are not official", MakesOfficialEvents(Moderator), n},
		{"creator's posts notify members", AnnouncesToMembers(Creator), y},
		{"admin's posts notify members", AnnouncesToMembers(Admin), y},
		{"moderator's posts do not", AnnouncesToMembers(Moderator), n},
		{"follower's posts do not", AnnouncesToMembers(Follower), n},
		{"attendee leaves", CanLeaveEvent("ATTENDEE"), y},
		{"event moderator leaves", CanLeaveEvent("MODERATOR"), y},
		{"host cannot leave", CanLeaveEvent("HOST"), n},
		{"non-attendee cannot leave", CanLeaveEvent(""), n},
		{"promote attendee", CanSetAttendeeRole("ATTENDEE", "MODERATOR"), y},
		{"demote moderator", CanSetAttendeeRole("MODERATOR", "ATTENDEE"), y},
		{"host cannot be changed", CanSetAttendeeRole("HOST", "ATTENDEE"), n},
		{"nobody becomes host", CanSetAttendeeRole("ATTENDEE", "HOST"), n},
		{"unknown role", CanSetAttendeeRole("ATTENDEE", "ADMIN"), n},
		{"attendee removable", CanRemoveAttendee("MODERATOR"), y},
		{"host not removable", CanRemoveAttendee("HOST"), n},
		{"creator skips gate", SkipsSubscriptionGate(Creator), y},
		{"subscriber role alone does not skip gate", SkipsSubscriptionGate(Subscriber), n},
		{"creator refunds payments", CanRefundPayments(Creator), y},
		{"admin refunds payments", CanRefundPayments(Admin), y},
		{"moderator does not refund", CanRefundPayments(Moderator), n},
		{"subscriber does not refund", CanRefundPayments(Subscriber), n},
		{"follower does not refund", CanRefundPayments(Follower), n},
		{"signed-in non-member does not refund", CanRefundPayments(Authenticated), n},
		{"visitor does not refund", CanRefundPayments(Public), n},
		{"unknown requirement means creator", AtLeast(Admin, "nonsense"), n},
		{"public requirement", AtLeast(Public, Public), y},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	gating := store.DefaultSettings("t")
	gating.Features.SubscriptionGating.Enabled = true
	gating.Features.SubscriptionGating.Settings.Required = true
	landingOnly := store.DefaultSettings("t")
	landingOnly.Features.SubscriptionGating.Enabled = true
	landingOnly.Features.SubscriptionGating.Settings.LandingPageOnly = true
	enabledOnly := store.DefaultSettings("t")
	enabledOnly.Features.SubscriptionGating.Enabled = true
	donating := store.DefaultSettings("t")
	donating.Features.Donations.Enabled = true
	for _, c := range []q{
		{"follower without subscription gated", Gated(gating, Follower, false), y},
		{"follower with subscription passes", Gated(gating, Follower, true), n},
		{"subscriber role without valid subscription gated", Gated(gating, Subscriber, false), y},
		{"moderator passes", Gated(gating, Moderator, false), n},
		{"gating off", Gated(store.DefaultSettings("t"), Follower, false), n},
		{"visitor gated", Gated(gating, Public, false), y},
		{"admin passes", Gated(gating, Admin, false), n},
		{"creator passes", Gated(gating, Creator, false), n},
		{"gated landing keeps teasers without landingPageOnly", ContentFor(gating, Follower, false) == ContentTeaser, y},
		{"landingPageOnly gates like required", Gated(landingOnly, Follower, false), y},
		{"landingPageOnly hides previews from the gated", ContentFor(landingOnly, Follower, false) == ContentNone, y},
		{"landingPageOnly shows everything to subscribers", ContentFor(landingOnly, Follower, true) == ContentAll, y},
		{"staff see everything of a gated app", ContentFor(gating, Moderator, false) == ContentAll, y},
		{"a gated viewer reads that a post is new, not what it says", NoticeText(ContentTeaser, store.KindNewPost, "New post: secret") == "New post for members", y},
		{"a gated viewer keeps their own order notices", NoticeText(ContentTeaser, store.KindOrderStatus, "Order #1 shipped") == "Order #1 shipped", y},
		{"a member reads the notice as written", NoticeText(ContentAll, store.KindNewEvent, "New event: Party") == "New event: Party", y},
		{"enabled but neither required nor landingPageOnly", Gated(enabledOnly, Follower, false), n},
		{"creator sees donations", CanSeeDonations(Creator), y},
		{"admin sees donations", CanSeeDonations(Admin), y},
		{"moderator does not see donations", CanSeeDonations(Moderator), n},
		{"follower does not see donations", CanSeeDonations(Follower), n},
		{"member donates", CanDonate(donating, Authenticated), y},
		{"visitor does not donate", CanDonate(donating, Public), n},
		{"donations off", CanDonate(store.DefaultSettings("t"), Follower), n},
		{"signed-in subscribes", CanSubscribe(Authenticated), y},
		{"visitor does not subscribe", CanSubscribe(Public), n},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestOrderRules: who fulfils, who cancels, by role (default settings).
func TestOrderRules(t *testing.T) {
	settings := store.DefaultSettings("t")
	table := []struct {
		role                         string
		fulfil, cancelOwn, cancelAny bool
	}{
		{Public, n, n, n},
		{Authenticated, n, n, n},
		{Follower, n, y, n},
		{Subscriber, n, y, n},
		{Moderator, n, y, n},
		{Admin, y, y, y},
		{Creator, y, y, y},
	}
	for _, r := range table {
		f := For(settings, r.role)
		if CanFulfilOrders(f) != r.fulfil || CanCancelOrder(f, true) != r.cancelOwn || CanCancelOrder(f, false) != r.cancelAny {
			t.Errorf("%s: fulfil %v cancelOwn %v cancelAny %v", r.role, CanFulfilOrders(f), CanCancelOrder(f, true), CanCancelOrder(f, false))
		}
	}
	off := store.DefaultSettings("t")
	off.Features.Store.Enabled = false
	if f := For(off, Creator); CanFulfilOrders(f) || CanCancelOrder(f, true) {
		t.Error("store off: no order actions")
	}
}
