CREATE TABLE "conversation_events" (
	"conversation_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversation_events_conversation_id_seq_pk" PRIMARY KEY("conversation_id","seq")
);
--> statement-breakpoint
CREATE TABLE "kb_chunks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" integer NOT NULL,
	"document_id" uuid NOT NULL,
	"ordinal" integer NOT NULL,
	"content" text NOT NULL,
	"tsv" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', content)) STORED NOT NULL
);
--> statement-breakpoint
CREATE TABLE "kb_documents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" integer NOT NULL,
	"conversation_id" uuid,
	"attachment_id" uuid,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"size" integer NOT NULL,
	"chunks" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "response_comments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" integer NOT NULL,
	"response_id" uuid NOT NULL,
	"visitor_id" text,
	"body" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "response_feedback" (
	"response_id" uuid NOT NULL,
	"visitor_id" text NOT NULL,
	"value" smallint NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "response_feedback_response_id_visitor_id_pk" PRIMARY KEY("response_id","visitor_id")
);
--> statement-breakpoint
CREATE TABLE "widget_clients" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"secret_hash" "bytea" NOT NULL,
	"domains" text[] NOT NULL,
	"channel_id" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"secret_rotated_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "widget_sightings" (
	"client_id" text NOT NULL,
	"account_id" integer NOT NULL,
	"origin" text NOT NULL,
	"widget_version" text NOT NULL,
	"day" date NOT NULL,
	"connections" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "widget_sightings_client_id_origin_widget_version_day_pk" PRIMARY KEY("client_id","origin","widget_version","day")
);
--> statement-breakpoint
CREATE TABLE "widget_signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"secret" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "attachments" ADD COLUMN "client_id" text;--> statement-breakpoint
ALTER TABLE "attachments" ADD COLUMN "visitor_id" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "visitor_id" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "client_id" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "last_seq" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "responses" ADD COLUMN "client_message_id" text;--> statement-breakpoint
ALTER TABLE "responses" ADD COLUMN "sources" jsonb;--> statement-breakpoint
ALTER TABLE "conversation_events" ADD CONSTRAINT "conversation_events_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_chunks" ADD CONSTRAINT "kb_chunks_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_chunks" ADD CONSTRAINT "kb_chunks_document_id_kb_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."kb_documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD CONSTRAINT "kb_documents_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD CONSTRAINT "kb_documents_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "response_comments" ADD CONSTRAINT "response_comments_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "response_comments" ADD CONSTRAINT "response_comments_response_id_responses_id_fk" FOREIGN KEY ("response_id") REFERENCES "public"."responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "response_feedback" ADD CONSTRAINT "response_feedback_response_id_responses_id_fk" FOREIGN KEY ("response_id") REFERENCES "public"."responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "widget_clients" ADD CONSTRAINT "widget_clients_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "widget_clients" ADD CONSTRAINT "widget_clients_channel_id_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."channels"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "widget_sightings" ADD CONSTRAINT "widget_sightings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kb_chunks_document_idx" ON "kb_chunks" USING btree ("document_id");--> statement-breakpoint
CREATE INDEX "kb_chunks_tsv_idx" ON "kb_chunks" USING gin ("tsv");--> statement-breakpoint
CREATE INDEX "kb_documents_account_idx" ON "kb_documents" USING btree ("account_id","conversation_id");--> statement-breakpoint
CREATE INDEX "response_comments_response_idx" ON "response_comments" USING btree ("response_id");--> statement-breakpoint
CREATE INDEX "widget_clients_account_idx" ON "widget_clients" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "widget_sightings_account_idx" ON "widget_sightings" USING btree ("account_id","day");--> statement-breakpoint
CREATE INDEX "conversations_visitor_idx" ON "conversations" USING btree ("visitor_id");--> statement-breakpoint
CREATE UNIQUE INDEX "responses_conversation_client_message_idx" ON "responses" USING btree ("conversation_id","client_message_id");