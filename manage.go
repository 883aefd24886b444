package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"marquee/store"
)

// manage runs the `app` and `member` commands: managing apps before any
// screen does it.
func manage(ctx context.Context, args []string, logger *slog.Logger) error {
	a, err := openApp(ctx, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	s := a.storage
	switch {
	case len(args) == 4 && args[0] == "app" && args[1] == "create" && strings.HasPrefix(args[3], "--creator="):
		args = []string{"app", "create", args[2], "--creator", strings.TrimPrefix(args[3], "--creator=")}
		fallthrough
	case len(args) == 5 && args[0] == "app" && args[1] == "create" && args[3] == "--creator":
		user, err := s.UserByEmail(ctx, args[4])
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no user with email %s: sign up first", args[4])
		}
		if err != nil {
			return err
		}
		app, err := s.CreateApp(ctx, args[2], user.ID)
		if err != nil {
			return err
		}
		fmt.Printf("created app %s (%s): %s/apps/%s\n", app.Name, app.ID, a.cfg.PublicURL, app.Name)
		return nil
	case len(args) >= 4 && args[0] == "app" && args[1] == "set":
		for _, kv := range args[3:] {
			key, value, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("expected KEY=VALUE, got %q", kv)
			}
			if err := s.SetAppField(ctx, args[2], key, value); err != nil {
				return err
			}
			fmt.Printf("%s: %s = %s\n", args[2], key, value)
		}
		return nil
	case len(args) == 5 && args[0] == "member" && args[1] == "set-role":
		app, err := s.AppByIDOrName(ctx, args[2])
		if err != nil {
			return fmt.Errorf("app %s: %w", args[2], err)
		}
		user, err := s.UserByEmail(ctx, args[3])
		if err != nil {
			return fmt.Errorf("user %s: %w", args[3], err)
		}
		if user.ID == app.CreatorID && args[4] != store.RoleCreator {
			return fmt.Errorf("%s created %s and stays its CREATOR", args[3], app.Name)
		}
		if err := s.SetMemberRole(ctx, app.ID, user.ID, strings.ToUpper(args[4])); err != nil {
			return err
		}
		fmt.Printf("%s is now %s in %s\n", args[3], strings.ToUpper(args[4]), app.Name)
		return nil
	}
	return fmt.Errorf("%s", usage)
}
