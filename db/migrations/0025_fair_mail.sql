-- The outbox is claimed per account, oldest first and round-robin (docs/decisions/handoff-mail.md);
-- 0 stands for mail of no account (sign-up). A member's last waiting mail bounds them to one a window.
ALTER TABLE "mails" ADD COLUMN "account_id" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
DROP INDEX IF EXISTS "mails_due_idx";--> statement-breakpoint
CREATE INDEX "mails_claim_idx" ON "mails" USING btree ("account_id","next_attempt_at","id") WHERE status = 'pending';--> statement-breakpoint
ALTER TABLE "admin_users" ADD COLUMN "waiting_mail_at" timestamp (3) with time zone;
