CREATE TABLE "email_answers" (
	"response_id" uuid PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"outcome" text NOT NULL,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "inbound_mails" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"envelope_from" text NOT NULL,
	"recipient" text NOT NULL,
	"raw" "bytea" NOT NULL,
	"size" integer NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"status" text DEFAULT 'stored' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_until" timestamp (3) with time zone,
	"message_id" text,
	"from_address" text,
	"subject" text,
	"conversation_id" uuid,
	"client_message_id" text,
	"thread_ids" jsonb,
	"processed_at" timestamp (3) with time zone,
	"last_error" text
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "inbound_local" text;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "email_ai_answers" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "email_acknowledge" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "email_tag" text;--> statement-breakpoint
ALTER TABLE "mails" ADD COLUMN "message_id" text;--> statement-breakpoint
ALTER TABLE "mails" ADD COLUMN "conversation_id" uuid;--> statement-breakpoint
ALTER TABLE "mails" ADD COLUMN "response_id" uuid;--> statement-breakpoint
ALTER TABLE "mails" ADD COLUMN "thread_headers" jsonb;--> statement-breakpoint
ALTER TABLE "email_answers" ADD CONSTRAINT "email_answers_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_mails" ADD CONSTRAINT "inbound_mails_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "inbound_mails_claim_idx" ON "inbound_mails" USING btree ("received_at","id") WHERE status = 'stored';--> statement-breakpoint
CREATE INDEX "inbound_mails_account_idx" ON "inbound_mails" USING btree ("account_id","received_at");--> statement-breakpoint
CREATE INDEX "inbound_mails_message_idx" ON "inbound_mails" USING btree ("account_id","message_id");--> statement-breakpoint
CREATE INDEX "inbound_mails_processed_idx" ON "inbound_mails" USING btree ("processed_at") WHERE status = 'done';--> statement-breakpoint
CREATE UNIQUE INDEX "inbound_mails_once_idx" ON "inbound_mails" USING btree ("account_id","from_address","message_id") WHERE status = 'done';--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_email_tag_idx" ON "conversations" USING btree ("account_id","email_tag") WHERE email_tag IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "mails_response_idx" ON "mails" USING btree ("response_id");--> statement-breakpoint
CREATE INDEX "mails_message_idx" ON "mails" USING btree ("account_id","message_id");--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_inbound_local_unique" UNIQUE("inbound_local");