ALTER TABLE "bot_settings" ADD COLUMN "endpoint_base_url" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "bot_settings" ADD COLUMN "endpoint_api_key" text;--> statement-breakpoint
ALTER TABLE "bot_settings" ADD COLUMN "embedding_model" text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE TABLE "kb_chunk_embeddings" (
	"chunk_id" uuid PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"model" text NOT NULL,
	"embedding" real[] NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "kb_chunk_embeddings" ADD CONSTRAINT "kb_chunk_embeddings_chunk_id_kb_chunks_id_fk" FOREIGN KEY ("chunk_id") REFERENCES "public"."kb_chunks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_chunk_embeddings" ADD CONSTRAINT "kb_chunk_embeddings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kb_chunk_embeddings_account_idx" ON "kb_chunk_embeddings" USING btree ("account_id","model");
