CREATE TABLE "chat_answers" (
	"response_id" uuid PRIMARY KEY NOT NULL,
	"conversation_id" uuid NOT NULL,
	"account_id" integer NOT NULL,
	"client_message_id" text NOT NULL,
	"job" jsonb NOT NULL,
	"owner" text NOT NULL,
	"lease_until" timestamp (3) with time zone NOT NULL,
	"attempts" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "chat_answers" ADD CONSTRAINT "chat_answers_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_answers" ADD CONSTRAINT "chat_answers_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "chat_answers_conversation_client_message_idx" ON "chat_answers" USING btree ("conversation_id","client_message_id");--> statement-breakpoint
CREATE INDEX "chat_answers_open_lease_idx" ON "chat_answers" USING btree ("lease_until") WHERE finished_at IS NULL;--> statement-breakpoint
-- Questions left unanswered by a stop before leases existed: expired leases, stored as failed by the next sweep.
INSERT INTO "chat_answers" ("response_id", "conversation_id", "account_id", "client_message_id", "job", "owner", "lease_until", "attempts")
SELECT (e."payload"->>'response_id')::uuid, e."conversation_id", c."account_id", e."payload"->>'client_message_id',
  jsonb_build_object('question', COALESCE(e."payload"->>'text', ''), 'channel_id', COALESCE((e."payload"->>'channel_id')::int, c."channel_id"),
    'question_message_id', e."payload"->>'question_message_id', 'answer_message_id', e."payload"->>'answer_message_id'),
  'before-leases', now(), 99
FROM "conversation_events" e JOIN "conversations" c ON c."id" = e."conversation_id"
WHERE e."kind" = 'question' AND e."payload" ? 'response_id' AND e."payload" ? 'client_message_id' AND NOT EXISTS (
  SELECT 1 FROM "responses" r WHERE r."conversation_id" = e."conversation_id" AND r."client_message_id" = e."payload"->>'client_message_id')
ON CONFLICT DO NOTHING;
