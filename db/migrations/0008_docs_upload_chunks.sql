CREATE TABLE "upload_chunks" (
	"upload_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "upload_chunks_upload_id_seq_pk" PRIMARY KEY("upload_id","seq")
);
--> statement-breakpoint
ALTER TABLE "attachments" ALTER COLUMN "storage_name" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "attachments" ADD COLUMN "status" text DEFAULT 'complete' NOT NULL;--> statement-breakpoint
ALTER TABLE "upload_chunks" ADD CONSTRAINT "upload_chunks_upload_id_attachments_id_fk" FOREIGN KEY ("upload_id") REFERENCES "public"."attachments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "attachments_account_idx" ON "attachments" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "attachments_unattached_idx" ON "attachments" USING btree ("created_at") WHERE "attachments"."message_id" IS NULL;
--> statement-breakpoint
ALTER TABLE "upload_chunks" ALTER COLUMN "data" SET STORAGE EXTERNAL;