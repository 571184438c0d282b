-- A member's reply mailed in an email conversation's thread (docs/contracts.md §17 "members"): the message it carries, mailed once; a refused or reported mail ends `failed`.
ALTER TABLE "mails" ADD COLUMN "conversation_message_id" uuid;
--> statement-breakpoint
CREATE UNIQUE INDEX "mails_conversation_message_idx" ON "mails" USING btree ("conversation_message_id");
--> statement-breakpoint
CREATE INDEX "mails_conversation_idx" ON "mails" USING btree ("account_id", "conversation_id") WHERE conversation_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "inbound_mails_conversation_idx" ON "inbound_mails" USING btree ("account_id", "conversation_id") WHERE conversation_id IS NOT NULL;
