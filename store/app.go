package store

import (
	"time"

	"github.com/uptrace/bun"
)

// Link is one entry of the link-in-bio block.
type Link struct {
	bun.BaseModel `bun:"table:links"`

	ID       string `bun:",pk" json:"id"`
	AppID    string `bun:",notnull" json:"-"`
	Title    string `bun:",notnull" json:"title"`
	URL      string `bun:"url,notnull" json:"url"`
	Icon     string `bun:",notnull,default:''" json:"icon"`
	Enabled  bool   `bun:",notnull" json:"enabled"`
	Position int    `bun:",notnull,default:0" json:"-"`
}

// App is one creator's white-label app, addressed by Name in /apps/{name}.
type App struct {
	bun.BaseModel `bun:"table:apps"`

	ID            string      `bun:",pk" json:"id"`
	Name          string      `bun:",unique,notnull" json:"name"`
	Status        string      `bun:",notnull,default:'PUBLIC'" json:"status"`
	Version       string      `bun:",notnull,default:'1.0.0'" json:"version"`
	Description   string      `bun:",notnull,default:''" json:"description"`
	Bio           string      `bun:",notnull,default:''" json:"bio"`
	CreatorID     string      `bun:",notnull" json:"creatorId"`
	BannerMediaID *string     `json:"-"`
	TitleMediaID  *string     `json:"-"`
	LogoMediaID   *string     `json:"-"`
	SplashMediaID *string     `json:"-"`
	Settings      AppSettings `bun:",type:text,notnull" json:"settings"`
	// Unpublished: the app answers to its staff only (issue 43 item 1); a
	// creator's new app starts so, until they publish it (app_launch.go).
	Unpublished bool `bun:",notnull,default:false" json:"-"`
	// PreviewedVisitorAt and PreviewedMemberAt: when staff last looked at
	// the app as a visitor or as a member would (the launch checklist).
	PreviewedVisitorAt *time.Time `json:"-"`
	PreviewedMemberAt  *time.Time `json:"-"`
	CreatedAt          time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
	UpdatedAt          time.Time  `bun:",notnull,default:current_timestamp" json:"updatedAt"`
}

// Community is the feed of an app; every app has exactly one.
type Community struct {
	bun.BaseModel `bun:"table:communities"`

	ID          string    `bun:",pk" json:"id"`
	AppID       string    `bun:",notnull,unique" json:"appId"`
	Name        string    `bun:",notnull,default:''" json:"name"`
	Description string    `bun:",notnull,default:''" json:"description"`
	CreatedAt   time.Time `bun:",notnull,default:current_timestamp" json:"createdAt"`
}
