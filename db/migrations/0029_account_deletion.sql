-- An account being deleted (docs/contracts.md §18): marked at once, so every door refuses it, then its rows go in batches; the lease lets one instance at a time carry on a deletion another left half done.
ALTER TABLE "accounts" ADD COLUMN "deleted_at" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "deletion_lease_until" timestamp (3) with time zone;
--> statement-breakpoint
CREATE INDEX "accounts_deleted_idx" ON "accounts" USING btree ("id") WHERE deleted_at IS NOT NULL;
