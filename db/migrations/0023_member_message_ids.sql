-- A member's reply or note carries the page's client_message_id (a resend stores nothing new). The
-- visitor's ids and the members' ids are unique per conversation each on their own, so neither side
-- can take the other's id; system lines carry none.
DROP INDEX IF EXISTS "conversation_messages_client_message_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "conversation_messages_visitor_client_message_idx" ON "conversation_messages" USING btree ("conversation_id","client_message_id") WHERE author = 'visitor';--> statement-breakpoint
CREATE UNIQUE INDEX "conversation_messages_member_client_message_idx" ON "conversation_messages" USING btree ("conversation_id","client_message_id") WHERE author IN ('agent', 'note');
