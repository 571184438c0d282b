ALTER TABLE "responses" ADD COLUMN "updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
UPDATE "responses" SET "updated_at" = "created_at";--> statement-breakpoint
CREATE INDEX "responses_account_updated_idx" ON "responses" USING btree ("account_id","updated_at","id");
