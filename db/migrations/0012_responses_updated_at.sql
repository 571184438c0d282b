-- No default while the column is added: rows older than it stay NULL (read as created_at), none is rewritten.
ALTER TABLE "responses" ADD COLUMN "updated_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "responses" ALTER COLUMN "updated_at" SET DEFAULT now();--> statement-breakpoint
CREATE INDEX "responses_account_changed_idx" ON "responses" USING btree ("account_id",COALESCE("updated_at", "created_at"),"id");
