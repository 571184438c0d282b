CREATE TABLE "bot_settings" (
	"account_id" integer PRIMARY KEY NOT NULL,
	"instructions" text DEFAULT '' NOT NULL,
	"no_answer_text" text DEFAULT '' NOT NULL,
	"model" text DEFAULT '' NOT NULL,
	"show_sources" boolean DEFAULT true NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "bot_settings" ADD CONSTRAINT "bot_settings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "title" text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE "kb_documents" SET "title" = regexp_replace("filename", '\.[^./\\]*$', '');--> statement-breakpoint
ALTER TABLE "kb_chunks" ADD COLUMN "context" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "kb_chunks" DROP COLUMN "tsv";--> statement-breakpoint
ALTER TABLE "kb_chunks" ADD COLUMN "tsv" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('english', context), 'A') || to_tsvector('english', content)) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "kb_chunks_tsv_idx" ON "kb_chunks" USING gin ("tsv");
