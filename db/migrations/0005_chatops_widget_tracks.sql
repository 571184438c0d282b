CREATE TABLE "widget_tracks" (
	"track" text PRIMARY KEY NOT NULL,
	"version" text NOT NULL,
	"history" text[] DEFAULT '{}'::text[] NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
