CREATE TABLE "insights_daily" (
	"account_id" integer NOT NULL,
	"channel_id" integer NOT NULL,
	"day" date NOT NULL,
	"conversations" integer DEFAULT 0 NOT NULL,
	"ai_resolved" integer DEFAULT 0 NOT NULL,
	"handoffs" integer DEFAULT 0 NOT NULL,
	"csat_ai_responses" integer DEFAULT 0 NOT NULL,
	"csat_ai_sum" integer DEFAULT 0 NOT NULL,
	"csat_ai_high" integer DEFAULT 0 NOT NULL,
	"csat_human_responses" integer DEFAULT 0 NOT NULL,
	"csat_human_sum" integer DEFAULT 0 NOT NULL,
	"csat_human_high" integer DEFAULT 0 NOT NULL,
	"median_first_response_seconds" double precision,
	"median_resolution_seconds" double precision,
	"first_response_hist" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"resolution_hist" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"declined_answers" integer DEFAULT 0 NOT NULL,
	"likes" bigint DEFAULT 0 NOT NULL,
	"dislikes" bigint DEFAULT 0 NOT NULL,
	"valid_until" timestamp (3) with time zone,
	CONSTRAINT "insights_daily_pk" PRIMARY KEY("account_id","day","channel_id")
);
--> statement-breakpoint
CREATE TABLE "insights_dirty_days" (
	"account_id" integer NOT NULL,
	"day" date NOT NULL,
	"xid" bigint NOT NULL,
	CONSTRAINT "insights_dirty_days_pk" PRIMARY KEY("account_id","day","xid")
);
--> statement-breakpoint
-- Every writer of conversations and responses marks the UTC creation days it touched, in its own transaction (db/queries/insights.ts refreshes them).
CREATE FUNCTION "insights_conversations_marked"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT account_id, (created_at AT TIME ZONE 'UTC')::date, txid_current() FROM new_rows ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT account_id, (created_at AT TIME ZONE 'UTC')::date, txid_current() FROM old_rows ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT d.account_id, d.day, txid_current() FROM new_rows n JOIN old_rows o ON o.id = n.id,
      LATERAL (VALUES (n.account_id, (n.created_at AT TIME ZONE 'UTC')::date), (o.account_id, (o.created_at AT TIME ZONE 'UTC')::date)) d(account_id, day)
    WHERE (n.account_id, n.channel_id, n.created_at, n.updated_at, n.status, n.handled_by, n.handed_off_at, n.first_reply_at, n.resolved_at, n.csat)
      IS DISTINCT FROM (o.account_id, o.channel_id, o.created_at, o.updated_at, o.status, o.handled_by, o.handed_off_at, o.first_reply_at, o.resolved_at, o.csat)
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- A response moves its own day (declined, likes, dislikes) and, when whether it is disliked changes, its conversation's day (AI-resolved).
CREATE FUNCTION "insights_responses_marked"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT account_id, (created_at AT TIME ZONE 'UTC')::date, txid_current() FROM new_rows
    UNION SELECT c.account_id, (c.created_at AT TIME ZONE 'UTC')::date, txid_current() FROM new_rows n JOIN conversations c ON c.id = n.conversation_id WHERE n.dislikes > 0
    ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT account_id, (created_at AT TIME ZONE 'UTC')::date, txid_current() FROM old_rows
    UNION SELECT c.account_id, (c.created_at AT TIME ZONE 'UTC')::date, txid_current() FROM old_rows o JOIN conversations c ON c.id = o.conversation_id WHERE o.dislikes > 0
    ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT d.account_id, d.day, txid_current() FROM new_rows n JOIN old_rows o ON o.id = n.id,
      LATERAL (VALUES (n.account_id, (n.created_at AT TIME ZONE 'UTC')::date), (o.account_id, (o.created_at AT TIME ZONE 'UTC')::date)) d(account_id, day)
    WHERE (n.account_id, n.channel_id, n.created_at, n.declined, n.likes, n.dislikes) IS DISTINCT FROM (o.account_id, o.channel_id, o.created_at, o.declined, o.likes, o.dislikes)
    UNION SELECT c.account_id, (c.created_at AT TIME ZONE 'UTC')::date, txid_current() FROM new_rows n JOIN old_rows o ON o.id = n.id
      JOIN conversations c ON c.id IN (n.conversation_id, o.conversation_id)
    WHERE (n.dislikes > 0) IS DISTINCT FROM (o.dislikes > 0) OR (n.conversation_id IS DISTINCT FROM o.conversation_id AND (n.dislikes > 0 OR o.dislikes > 0))
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "insights_conversations_insert" AFTER INSERT ON "conversations" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "insights_conversations_marked"();
--> statement-breakpoint
CREATE TRIGGER "insights_conversations_update" AFTER UPDATE ON "conversations" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "insights_conversations_marked"();
--> statement-breakpoint
CREATE TRIGGER "insights_conversations_delete" AFTER DELETE ON "conversations" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "insights_conversations_marked"();
--> statement-breakpoint
CREATE TRIGGER "insights_responses_insert" AFTER INSERT ON "responses" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "insights_responses_marked"();
--> statement-breakpoint
CREATE TRIGGER "insights_responses_update" AFTER UPDATE ON "responses" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "insights_responses_marked"();
--> statement-breakpoint
CREATE TRIGGER "insights_responses_delete" AFTER DELETE ON "responses" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "insights_responses_marked"();
--> statement-breakpoint
-- Existing data: every day that has a conversation or a response is refreshed on its first read.
INSERT INTO "insights_dirty_days" ("account_id", "day", "xid")
  SELECT DISTINCT "account_id", ("created_at" AT TIME ZONE 'UTC')::date, 0 FROM "conversations"
  UNION SELECT DISTINCT "account_id", ("created_at" AT TIME ZONE 'UTC')::date, 0 FROM "responses";
