-- Data lifecycle (docs/contracts.md §18): an account's retention in days (null: off).
ALTER TABLE "accounts" ADD COLUMN "retention_days" integer;
--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_retention_days_check" CHECK ("retention_days" BETWEEN 1 AND 3650);
--> statement-breakpoint
-- Past days a retention or erasure deleted conversations of: their insights_daily rows keep the figures they had then and are never recomputed.
CREATE TABLE "insights_kept_days" (
	"account_id" integer NOT NULL,
	"day" date NOT NULL,
	CONSTRAINT "insights_kept_days_pk" PRIMARY KEY("account_id","day")
);
--> statement-breakpoint
-- A lifecycle delete sets svc.keep_insights for its transaction: its deletes mark no day dirty (the days were rolled up and kept first).
CREATE OR REPLACE FUNCTION "insights_conversations_marked"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('svc.keep_insights', true) = 'on' THEN RETURN NULL; END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT account_id, (created_at AT TIME ZONE 'UTC')::date, txid_current() FROM new_rows ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT account_id, (created_at AT TIME ZONE 'UTC')::date, txid_current() FROM old_rows ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT changed.account_id, (changed.created_at AT TIME ZONE 'UTC')::date, txid_current() FROM (
      SELECT t.account_id, t.created_at FROM (
        SELECT 1 AS side, id, account_id, channel_id, created_at, updated_at, status, handled_by, handed_off_at, first_reply_at, resolved_at, csat FROM new_rows
        UNION ALL
        SELECT -1, id, account_id, channel_id, created_at, updated_at, status, handled_by, handed_off_at, first_reply_at, resolved_at, csat FROM old_rows
      ) t
      GROUP BY t.id, t.account_id, t.channel_id, t.created_at, t.updated_at, t.status, t.handled_by, t.handed_off_at, t.first_reply_at, t.resolved_at, t.csat
      HAVING sum(t.side) <> 0
    ) changed
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "insights_responses_marked"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('svc.keep_insights', true) = 'on' THEN RETURN NULL; END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT account_id, (created_at AT TIME ZONE 'UTC')::date, txid_current() FROM new_rows
    UNION SELECT c.account_id, (c.created_at AT TIME ZONE 'UTC')::date, txid_current()
      FROM (SELECT DISTINCT conversation_id FROM new_rows) n JOIN conversations c ON c.id = n.conversation_id
    ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT DISTINCT account_id, (created_at AT TIME ZONE 'UTC')::date, txid_current() FROM old_rows
    UNION SELECT c.account_id, (c.created_at AT TIME ZONE 'UTC')::date, txid_current()
      FROM (SELECT DISTINCT conversation_id FROM old_rows) o JOIN conversations c ON c.id = o.conversation_id
    ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO insights_dirty_days (account_id, day, xid)
    SELECT changed.account_id, (changed.created_at AT TIME ZONE 'UTC')::date, txid_current() FROM (
      SELECT t.account_id, t.created_at FROM (
        SELECT 1 AS side, id, account_id, channel_id, created_at, declined, likes, dislikes FROM new_rows
        UNION ALL
        SELECT -1, id, account_id, channel_id, created_at, declined, likes, dislikes FROM old_rows
      ) t
      GROUP BY t.id, t.account_id, t.channel_id, t.created_at, t.declined, t.likes, t.dislikes
      HAVING sum(t.side) <> 0
    ) changed
    UNION SELECT c.account_id, (c.created_at AT TIME ZONE 'UTC')::date, txid_current() FROM (
      SELECT DISTINCT t.conversation_id FROM (
        SELECT 1 AS side, id, conversation_id, created_at, declined, likes > 0 AS liked, dislikes > 0 AS disliked, md5(question) AS question FROM new_rows
        UNION ALL
        SELECT -1, id, conversation_id, created_at, declined, likes > 0, dislikes > 0, md5(question) FROM old_rows
      ) t
      GROUP BY t.id, t.conversation_id, t.created_at, t.declined, t.liked, t.disliked, t.question
      HAVING sum(t.side) <> 0
    ) moved JOIN conversations c ON c.id = moved.conversation_id
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Erasing a visitor by email, and deleting a conversation's rows keyed by its id without a scan.
CREATE INDEX "conversations_visitor_email_idx" ON "conversations" USING btree ("account_id", lower("visitor_email")) WHERE "visitor_email" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "webhook_events_conversation_idx" ON "webhook_events" USING btree ("conversation_id");
-- mails and inbound_mails by (account_id, conversation_id): migration 0032's indexes.
