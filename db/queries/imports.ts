import { sql } from 'drizzle-orm';
import { copyFrom, rows, type Db } from '../client';

export type LineProblem = { line: number; message: string };

const CONVERSATION_COLUMNS = ['line', 'id', 'title', 'status', 'channel_id', 'channel_name', 'created_at', 'updated_at', 'handoff'] as const;
const RESPONSE_COLUMNS = ['line', 'id', 'conversation_id', 'question', 'answer', 'channel_id', 'created_at', 'likes', 'dislikes', 'comments'] as const;

/** A staged conversation line; timestamps with their zone (`…+00`). */
export type StagedConversation = {
  line: number;
  id: string;
  title: string;
  status: string;
  channel_id: number;
  channel_name: string;
  created_at: string;
  updated_at: string;
  /**
   * The handoff fields the line gives (docs/contracts.md §14), only those: `handled_by`, `assignee`
   * (a member's email), `waiting_since`, `resolved_at` (with their zone), `csat`. Null: none given.
   */
  handoff: Record<string, unknown> | null;
};
export type StagedResponse = {
  line: number;
  id: string;
  conversation_id: string;
  question: string;
  answer: string;
  channel_id: number;
  created_at: string;
  likes: number;
  dislikes: number;
  comments: number;
};

const COPY_SPECIAL = /[\\\t\n\r\u0000]/;
const COPY_SPECIAL_ALL = /[\\\t\n\r\u0000]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * One text value as a field of COPY's text format: backslash, tab, newline and carriage return
 * escaped (so no data line can read as the `\.` end marker). NUL cannot be stored in text at all:
 * the import refuses it before this; here it is a bug.
 */
export function copyTextField(value: string): string {
  if (!COPY_SPECIAL.test(value)) return value;
  return value.replace(COPY_SPECIAL_ALL, (c) => {
    if (c === '\u0000') throw new Error('COPY text format cannot carry a NUL character');
    return COPY_ESCAPES[c]!;
  });
}

export function conversationCopyRow(c: StagedConversation): string {
  const handoff = c.handoff ? copyTextField(JSON.stringify(c.handoff)) : '\\N';
  return `${c.line}\t${c.id}\t${copyTextField(c.title)}\t${copyTextField(c.status)}\t${c.channel_id}\t${copyTextField(c.channel_name)}\t${c.created_at}\t${c.updated_at}\t${handoff}\n`;
}

export function responseCopyRow(r: StagedResponse): string {
  return `${r.line}\t${r.id}\t${r.conversation_id}\t${copyTextField(r.question)}\t${copyTextField(r.answer)}\t${r.channel_id}\t${r.created_at}\t${r.likes}\t${r.dislikes}\t${r.comments}\n`;
}

export async function createImportStaging(db: Db): Promise<void> {
  // Temporary tables write no WAL, and ON COMMIT DROP leaves nothing behind, committed or not.
  await db.execute(sql`CREATE TEMP TABLE import_conversations (
    line int NOT NULL, id uuid NOT NULL, title text NOT NULL, status text NOT NULL, channel_id int NOT NULL,
    channel_name text NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL, handoff jsonb) ON COMMIT DROP`);
  await db.execute(sql`CREATE TEMP TABLE import_responses (
    line int NOT NULL, id uuid NOT NULL, conversation_id uuid NOT NULL, question text NOT NULL, answer text NOT NULL,
    channel_id int NOT NULL, created_at timestamptz NOT NULL, likes int NOT NULL, dislikes int NOT NULL,
    comments int NOT NULL) ON COMMIT DROP`);
}

/** Appends rows made by conversationCopyRow (concatenated) to the staging table. */
export async function stageConversationRows(db: Db, copyRows: string): Promise<void> {
  await copyFrom(db, 'import_conversations', CONVERSATION_COLUMNS, copyRows);
}

/** Appends rows made by responseCopyRow (concatenated) to the staging table. */
export async function stageResponseRows(db: Db, copyRows: string): Promise<void> {
  await copyFrom(db, 'import_responses', RESPONSE_COLUMNS, copyRows);
}

/**
 * Every rule that needs the database or the whole file, as set queries over the staging tables.
 * Returns at most `limit` problems, ordered by line.
 */
export async function findImportProblems(db: Db, accountId: number, limit: number): Promise<LineProblem[]> {
  await db.execute(sql`CREATE INDEX ON import_conversations (id)`);
  await db.execute(sql`CREATE INDEX ON import_responses (id)`);
  await db.execute(sql`ANALYZE import_conversations`);
  await db.execute(sql`ANALYZE import_responses`);
  return rows<LineProblem>(
    db,
    sql`
    WITH problems AS (
      SELECT s.line, 'conversation_id ' || s.id || ' appears more than once in the file (also line ' || d.line || ')' AS message
        FROM import_conversations s JOIN import_conversations d ON d.id = s.id AND d.line < s.line
      UNION ALL
      SELECT s.line, 'response_id ' || s.id || ' appears more than once in the file (also line ' || d.line || ')'
        FROM import_responses s JOIN import_responses d ON d.id = s.id AND d.line < s.line
      UNION ALL
      SELECT s.line, 'conversation_id ' || s.id || ' belongs to another account'
        FROM import_conversations s JOIN conversations c ON c.id = s.id WHERE c.account_id <> ${accountId}
      UNION ALL
      SELECT s.line, 'response_id ' || s.id || ' belongs to another account'
        FROM import_responses s JOIN responses r ON r.id = s.id WHERE r.account_id <> ${accountId}
      UNION ALL
      SELECT s.line, 'conversation ' || s.conversation_id || ' does not exist (it must be earlier in the file or already imported)'
        FROM import_responses s
        WHERE NOT EXISTS (SELECT 1 FROM import_conversations c WHERE c.id = s.conversation_id AND c.line < s.line)
          AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.id = s.conversation_id AND c.account_id = ${accountId})
      UNION ALL
      SELECT s.line, 'channel_id ' || s.channel_id || ' differs from channel_id ' || x.channel_id || ' of conversation ' || s.conversation_id
        FROM import_responses s
        JOIN LATERAL (
          SELECT channel_id FROM import_conversations c WHERE c.id = s.conversation_id
          UNION ALL
          SELECT channel_id FROM conversations c WHERE c.id = s.conversation_id AND c.account_id = ${accountId}
            AND NOT EXISTS (SELECT 1 FROM import_conversations i WHERE i.id = s.conversation_id)
          LIMIT 1
        ) x ON true
        WHERE x.channel_id <> s.channel_id
      UNION ALL
      SELECT s.line, 'conversation ' || s.id || ' moves from channel ' || c.channel_id || ' to ' || s.channel_id
          || ' but has stored responses that this file does not move with it'
        FROM import_conversations s JOIN conversations c ON c.id = s.id AND c.account_id = ${accountId}
        WHERE c.channel_id <> s.channel_id AND EXISTS (
          SELECT 1 FROM responses r WHERE r.conversation_id = c.id
            AND NOT EXISTS (SELECT 1 FROM import_responses i WHERE i.id = r.id))
      UNION ALL
      SELECT s.line, 'assignee ' || (s.handoff->>'assignee') || ' is not a member of this account'
        FROM import_conversations s
        WHERE s.handoff->>'assignee' IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM admin_users u WHERE u.account_id = ${accountId} AND lower(u.email) = lower(s.handoff->>'assignee'))
    )
    SELECT line, message FROM problems ORDER BY line, message LIMIT ${limit}`,
  );
}

/** Writes the staged rows (upserts) and brings the counters of what they touched back to exact. */
export async function applyImport(db: Db, accountId: number, onStep: (step: string) => void = () => {}): Promise<void> {
  // Conversations whose counts may change: those in the file, and those a moved response leaves.
  await db.execute(sql`CREATE TEMP TABLE import_touched ON COMMIT DROP AS
    SELECT id FROM import_conversations
    UNION SELECT conversation_id FROM import_responses
    UNION SELECT r.conversation_id FROM responses r JOIN import_responses i ON i.id = r.id`);

  await db.execute(sql`
    INSERT INTO channels (id, account_id, name)
    SELECT DISTINCT ON (channel_id) channel_id, ${accountId}, channel_name
    FROM import_conversations ORDER BY channel_id, line DESC
    ON CONFLICT (account_id, id) DO UPDATE SET name = excluded.name
    WHERE channels.name IS DISTINCT FROM excluded.name`);

  onStep('conversations');
  await db.execute(sql`
    INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at)
    SELECT id, ${accountId}, channel_id, title, status, created_at, updated_at FROM import_conversations
    ON CONFLICT (id) DO UPDATE SET channel_id = excluded.channel_id, title = excluded.title,
      status = excluded.status, created_at = excluded.created_at, updated_at = excluded.updated_at
    WHERE conversations.account_id = ${accountId}`);
  // The handoff fields a line gives replace the stored ones; those it leaves out stay as they are.
  await db.execute(sql`
    UPDATE conversations c SET
      handled_by = CASE WHEN s.handoff ? 'handled_by' THEN s.handoff->>'handled_by' ELSE c.handled_by END,
      assignee_id = CASE WHEN s.handoff ? 'assignee' THEN (SELECT u.id FROM admin_users u
        WHERE u.account_id = ${accountId} AND lower(u.email) = lower(s.handoff->>'assignee')) ELSE c.assignee_id END,
      waiting_since = CASE WHEN s.handoff ? 'waiting_since' THEN (s.handoff->>'waiting_since')::timestamptz ELSE c.waiting_since END,
      resolved_at = CASE WHEN s.handoff ? 'resolved_at' THEN (s.handoff->>'resolved_at')::timestamptz ELSE c.resolved_at END,
      csat = CASE WHEN s.handoff ? 'csat' THEN (s.handoff->>'csat')::smallint ELSE c.csat END
    FROM import_conversations s WHERE s.id = c.id AND c.account_id = ${accountId} AND s.handoff IS NOT NULL`);

  onStep('responses');
  // Rows in primary-key order: the key index is then filled in one pass instead of at random
  // places, and the sort of a large import gets the memory to stay mostly in RAM (this statement only).
  await db.execute(sql`SET LOCAL work_mem = '64MB'`);
  // A response the file inserts or changes gets updated_at = now(); an unchanged one is not rewritten.
  // Conversations keep the file's updated_at (docs/contracts.md §3): an import never invents one.
  await db.execute(sql`
    INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, likes, dislikes, comments, created_at, updated_at)
    SELECT id, ${accountId}, conversation_id, channel_id, question, answer, likes, dislikes, comments, created_at, now()
    FROM import_responses ORDER BY id
    ON CONFLICT (id) DO UPDATE SET conversation_id = excluded.conversation_id, channel_id = excluded.channel_id,
      question = excluded.question, answer = excluded.answer, likes = excluded.likes,
      dislikes = excluded.dislikes, comments = excluded.comments, created_at = excluded.created_at, updated_at = now()
    WHERE responses.account_id = ${accountId}
      AND (responses.conversation_id, responses.channel_id, responses.question, responses.answer, responses.likes,
           responses.dislikes, responses.comments, responses.created_at)
        IS DISTINCT FROM (excluded.conversation_id, excluded.channel_id, excluded.question, excluded.answer, excluded.likes,
           excluded.dislikes, excluded.comments, excluded.created_at)`);

  await db.execute(sql`SET LOCAL work_mem TO DEFAULT`);

  onStep('counters');
  await db.execute(sql`
    UPDATE conversations c SET response_count = n.cnt
    FROM (
      SELECT t.id, (SELECT count(*)::int FROM responses r WHERE r.conversation_id = t.id) AS cnt
      FROM import_touched t
    ) n
    WHERE c.id = n.id AND c.account_id = ${accountId} AND c.response_count <> n.cnt`);
  await refreshAccountCounters(db, accountId);
}

/** Channel and account counters from the (exact) conversation counters of the account. */
export async function refreshAccountCounters(db: Db, accountId: number): Promise<void> {
  await db.execute(sql`
    UPDATE channels ch SET conversation_count = s.conversations, response_count = s.responses
    FROM (
      SELECT ch2.id, count(c.id)::int AS conversations, COALESCE(sum(c.response_count), 0)::int AS responses
      FROM channels ch2 LEFT JOIN conversations c ON c.account_id = ch2.account_id AND c.channel_id = ch2.id
      WHERE ch2.account_id = ${accountId} GROUP BY ch2.id
    ) s
    WHERE ch.account_id = ${accountId} AND ch.id = s.id AND (ch.conversation_count <> s.conversations OR ch.response_count <> s.responses)`);
  await db.execute(sql`
    UPDATE accounts a SET
      conversation_count = (SELECT COALESCE(sum(conversation_count), 0)::int FROM channels WHERE account_id = ${accountId}),
      response_count = (SELECT COALESCE(sum(response_count), 0)::int FROM channels WHERE account_id = ${accountId})
    WHERE a.id = ${accountId}`);
}

/** After a large import: fresh statistics and a visibility map, so deep pages use index-only scans. */
export async function vacuumRecordTables(db: Db): Promise<void> {
  await db.execute(sql`VACUUM (ANALYZE) conversations`);
  await db.execute(sql`VACUUM (ANALYZE) responses`);
  await db.execute(sql`VACUUM (ANALYZE) channels`);
}
