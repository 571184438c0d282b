-- The update branches never join old_rows to new_rows: transition tables have no statistics, and the planner's nested loop over them made a bulk update quadratic (a 20,000-row counter update took 57 s). A row whose tracked columns changed is one whose old and new tuples do not cancel out when counted +1 and -1 per value (GROUP BY treats NULLs as equal, as IS DISTINCT FROM does); both of its tuples' days are marked.
CREATE OR REPLACE FUNCTION "insights_conversations_marked"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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
-- A response moves its own day (declined, likes, dislikes) and, when whether it is disliked or its conversation changes, its conversations' days (AI-resolved); same +1/-1 count instead of a join of old_rows and new_rows.
CREATE OR REPLACE FUNCTION "insights_responses_marked"() RETURNS trigger LANGUAGE plpgsql AS $$
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
      SELECT t.conversation_id FROM (
        SELECT 1 AS side, id, conversation_id, dislikes > 0 AS disliked FROM new_rows
        UNION ALL
        SELECT -1, id, conversation_id, dislikes > 0 FROM old_rows
      ) t
      GROUP BY t.id, t.conversation_id, t.disliked
      HAVING sum(t.side) <> 0
    ) moved JOIN conversations c ON c.id = moved.conversation_id
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- The inbox counts follow an update per statement too: the per-row trigger upserted the same counts row once per changed row, and a row updated k times in one transaction walks its k versions, so a bulk status change of 40,000 conversations took 62 s in that trigger (×4 per doubling). The net change per count is new rows minus old rows of each key; a statement that moves no count (an answer's response_count) writes nothing.
CREATE FUNCTION "conversation_counts_moved"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO conversation_counts AS k (account_id, status, handled_by, assignee_id, n)
  SELECT t.account_id, t.status, t.handled_by, t.assignee_id, sum(t.side) FROM (
    SELECT account_id, status, handled_by, COALESCE(assignee_id, 0) AS assignee_id, 1::bigint AS side FROM new_rows
    UNION ALL
    SELECT account_id, status, handled_by, COALESCE(assignee_id, 0), -1::bigint FROM old_rows
  ) t
  GROUP BY 1, 2, 3, 4 HAVING sum(t.side) <> 0 ORDER BY 1, 2, 3, 4
  ON CONFLICT (account_id, status, handled_by, assignee_id) DO UPDATE SET n = k.n + EXCLUDED.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER "conversation_counts_update" ON "conversations";
--> statement-breakpoint
CREATE TRIGGER "conversation_counts_update" AFTER UPDATE ON "conversations" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "conversation_counts_moved"();
--> statement-breakpoint
DROP FUNCTION "conversation_counts_changed"();
