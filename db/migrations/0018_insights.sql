CREATE INDEX "responses_disliked_conversation_idx" ON "responses" USING btree ("conversation_id") WHERE dislikes > 0;--> statement-breakpoint
CREATE INDEX "responses_declined_idx" ON "responses" USING btree ("account_id","created_at","id") WHERE declined;
