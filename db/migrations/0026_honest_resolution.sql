-- Honest resolution (docs/decisions/insights.md): each day's conversations the AI answered and its AI-resolved ones the visitor confirmed; the assumed ones are ai_resolved minus these.
ALTER TABLE "insights_daily" ADD COLUMN "ai_involved" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "insights_daily" ADD COLUMN "ai_resolved_confirmed" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Any response written, deleted or changed in what these read (declined, likes, dislikes, question, time, conversation) marks its conversation's day; the update branch counts each row's old and new tuple +1/-1 instead of joining old_rows to new_rows (migration 0024).
CREATE OR REPLACE FUNCTION "insights_responses_marked"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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
-- Every day already rolled up is recomputed (with the new columns) on its next read or by the background refresh.
INSERT INTO insights_dirty_days (account_id, day, xid) SELECT DISTINCT account_id, day, 0 FROM insights_daily ON CONFLICT DO NOTHING;
