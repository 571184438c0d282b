ALTER TABLE "conversations" ADD COLUMN "handled_by" text DEFAULT 'ai' NOT NULL;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "assignee_id" integer;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "waiting_since" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "resolved_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "snoozed_until" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "handed_off_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "first_reply_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "csat" smallint;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "csat_comment" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "visitor_email" text;--> statement-breakpoint
ALTER TABLE "responses" ADD COLUMN "declined" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Widget answers stored before the column: the engines decline with no sources, and answer with some.
UPDATE "responses" SET "declined" = true WHERE "client_message_id" IS NOT NULL AND "error" IS NULL AND "sources" = '[]'::jsonb;--> statement-breakpoint
ALTER TABLE "admin_users" ADD COLUMN "availability" text DEFAULT 'online' NOT NULL;--> statement-breakpoint
ALTER TABLE "admin_users" ADD COLUMN "dashboard_seen_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "admin_users" ADD COLUMN "notify_email" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE TABLE "conversation_messages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigserial NOT NULL,
	"account_id" integer NOT NULL,
	"conversation_id" uuid NOT NULL,
	"author" text NOT NULL,
	"author_user_id" integer,
	"author_name" text,
	"text" text NOT NULL,
	"client_message_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"seen_at" timestamp (3) with time zone,
	"mailed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "handoff_settings" (
	"account_id" integer PRIMARY KEY NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"time_zone" text DEFAULT 'UTC' NOT NULL,
	"hours" jsonb,
	"away_text" text DEFAULT '' NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "canned_replies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" integer NOT NULL,
	"shortcut" text NOT NULL,
	"text" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_assignee_id_admin_users_id_fk" FOREIGN KEY ("assignee_id") REFERENCES "public"."admin_users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_messages" ADD CONSTRAINT "conversation_messages_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_messages" ADD CONSTRAINT "conversation_messages_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_messages" ADD CONSTRAINT "conversation_messages_author_user_id_admin_users_id_fk" FOREIGN KEY ("author_user_id") REFERENCES "public"."admin_users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "handoff_settings" ADD CONSTRAINT "handoff_settings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "canned_replies" ADD CONSTRAINT "canned_replies_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "conversation_messages_conversation_idx" ON "conversation_messages" USING btree ("conversation_id","created_at","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "conversation_messages_client_message_idx" ON "conversation_messages" USING btree ("conversation_id","client_message_id");--> statement-breakpoint
CREATE INDEX "conversation_messages_unseen_idx" ON "conversation_messages" USING btree ("created_at") WHERE author = 'agent' AND seen_at IS NULL AND mailed_at IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "canned_replies_shortcut_idx" ON "canned_replies" USING btree ("account_id","shortcut");--> statement-breakpoint
CREATE INDEX "conversations_waiting_idx" ON "conversations" USING btree ("account_id","waiting_since","id") WHERE status = 'Waiting';--> statement-breakpoint
CREATE INDEX "conversations_open_idx" ON "conversations" USING btree ("account_id","updated_at","id") WHERE status = 'Open';--> statement-breakpoint
CREATE INDEX "conversations_active_assignee_idx" ON "conversations" USING btree ("account_id","assignee_id","updated_at","id") WHERE status IN ('Open', 'Waiting', 'Snoozed');--> statement-breakpoint
CREATE INDEX "conversations_unassigned_idx" ON "conversations" USING btree ("account_id","updated_at","id") WHERE status IN ('Open', 'Waiting', 'Snoozed') AND handled_by = 'human' AND assignee_id IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_resolved_idx" ON "conversations" USING btree ("account_id","resolved_at","id") WHERE status = 'Resolved';--> statement-breakpoint
CREATE INDEX "conversations_snoozed_due_idx" ON "conversations" USING btree ("snoozed_until") WHERE status = 'Snoozed';--> statement-breakpoint
CREATE INDEX "conversations_account_status_idx" ON "conversations" USING btree ("account_id","status","created_at","id");
--> statement-breakpoint
CREATE TABLE "conversation_counts" (
	"account_id" integer NOT NULL,
	"status" text NOT NULL,
	"handled_by" text NOT NULL,
	"assignee_id" integer DEFAULT 0 NOT NULL,
	"n" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "conversation_counts_pk" PRIMARY KEY("account_id","status","handled_by","assignee_id")
);
--> statement-breakpoint
-- The inbox's counts, kept exact by triggers on every writer (assignee 0 = nobody): inserts and deletes per statement, changes per changed row.
CREATE FUNCTION "conversation_counts_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO conversation_counts AS k (account_id, status, handled_by, assignee_id, n)
  SELECT account_id, status, handled_by, COALESCE(assignee_id, 0), count(*) FROM new_rows GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (account_id, status, handled_by, assignee_id) DO UPDATE SET n = k.n + EXCLUDED.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "conversation_counts_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO conversation_counts AS k (account_id, status, handled_by, assignee_id, n)
  SELECT account_id, status, handled_by, COALESCE(assignee_id, 0), -count(*) FROM old_rows GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (account_id, status, handled_by, assignee_id) DO UPDATE SET n = k.n + EXCLUDED.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION "conversation_counts_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO conversation_counts AS k (account_id, status, handled_by, assignee_id, n)
  SELECT * FROM (VALUES (OLD.account_id, OLD.status, OLD.handled_by, COALESCE(OLD.assignee_id, 0), -1::bigint),
    (NEW.account_id, NEW.status, NEW.handled_by, COALESCE(NEW.assignee_id, 0), 1::bigint)) v ORDER BY 1, 2, 3, 4
  ON CONFLICT (account_id, status, handled_by, assignee_id) DO UPDATE SET n = k.n + EXCLUDED.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "conversation_counts_insert" AFTER INSERT ON "conversations" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "conversation_counts_inserted"();
--> statement-breakpoint
CREATE TRIGGER "conversation_counts_delete" AFTER DELETE ON "conversations" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "conversation_counts_deleted"();
--> statement-breakpoint
CREATE TRIGGER "conversation_counts_update" AFTER UPDATE OF "status", "handled_by", "assignee_id", "account_id" ON "conversations" FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.handled_by IS DISTINCT FROM NEW.handled_by OR OLD.assignee_id IS DISTINCT FROM NEW.assignee_id OR OLD.account_id IS DISTINCT FROM NEW.account_id)
  EXECUTE FUNCTION "conversation_counts_changed"();
--> statement-breakpoint
INSERT INTO "conversation_counts" ("account_id", "status", "handled_by", "assignee_id", "n")
  SELECT "account_id", "status", "handled_by", COALESCE("assignee_id", 0), count(*) FROM "conversations" GROUP BY 1, 2, 3, 4;
