CREATE TABLE "kb_sites" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" integer NOT NULL,
	"url" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"pages" integer DEFAULT 0 NOT NULL,
	"error" text,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "kb_sites" ADD CONSTRAINT "kb_sites_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "kb_sites_account_url_idx" ON "kb_sites" USING btree ("account_id","url");
--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "lineage_id" uuid;
--> statement-breakpoint
UPDATE "kb_documents" SET "lineage_id" = "id";
--> statement-breakpoint
ALTER TABLE "kb_documents" ALTER COLUMN "lineage_id" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "superseded_at" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "site_id" uuid;
--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "source_url" text;
--> statement-breakpoint
ALTER TABLE "kb_documents" ADD COLUMN "content_hash" text;
--> statement-breakpoint
ALTER TABLE "kb_documents" ADD CONSTRAINT "kb_documents_site_id_kb_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."kb_sites"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "kb_documents_lineage_idx" ON "kb_documents" USING btree ("lineage_id");
--> statement-breakpoint
CREATE INDEX "kb_documents_site_idx" ON "kb_documents" USING btree ("site_id");
