DROP INDEX "webhook_deliveries_endpoint_event_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_due_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_event_endpoint_idx" ON "webhook_deliveries" USING btree ("event_id","endpoint_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_claim_idx" ON "webhook_deliveries" USING btree ("endpoint_id","next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_held_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at") WHERE status = 'held';--> statement-breakpoint
CREATE INDEX "webhook_events_created_idx" ON "webhook_events" USING btree ("created_at");--> statement-breakpoint
UPDATE "webhook_deliveries" d SET "status" = 'held' FROM "webhook_endpoints" e WHERE e."id" = d."endpoint_id" AND e."paused_at" IS NOT NULL AND d."status" = 'pending';
