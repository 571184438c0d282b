CREATE TABLE "widget_refusals" (
	"client_id" text NOT NULL,
	"account_id" integer NOT NULL,
	"origin" text NOT NULL,
	"stage" text NOT NULL,
	"reason" text NOT NULL,
	"detail" text NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	"first_seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "widget_refusals_client_id_origin_stage_reason_pk" PRIMARY KEY("client_id","origin","stage","reason")
);
--> statement-breakpoint
ALTER TABLE "widget_clients" ADD COLUMN "name" text DEFAULT '' NOT NULL;
--> statement-breakpoint
ALTER TABLE "widget_refusals" ADD CONSTRAINT "widget_refusals_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "widget_refusals_account_idx" ON "widget_refusals" USING btree ("account_id","last_seen_at");--> statement-breakpoint
-- Existing clients are named after their first registered domain.
UPDATE "widget_clients" SET "name" = coalesce("domains"[1], 'Widget client') WHERE "name" = '';
