ALTER TABLE "conversations" DROP CONSTRAINT "conversations_channel_id_channels_id_fk";
--> statement-breakpoint
ALTER TABLE "responses" DROP CONSTRAINT "responses_channel_id_channels_id_fk";
--> statement-breakpoint
ALTER TABLE "widget_clients" DROP CONSTRAINT "widget_clients_channel_id_channels_id_fk";
--> statement-breakpoint
DROP INDEX "channels_account_idx";--> statement-breakpoint
-- Channel ids belong to their account (CONTRACTS §3). Existing ids were unique service-wide, so every
-- existing row keeps its id and stays valid under the relaxed (account_id, id) key: no data moves.
ALTER TABLE "channels" DROP CONSTRAINT "channels_pkey";--> statement-breakpoint
ALTER TABLE "channels" ALTER COLUMN "id" DROP IDENTITY;--> statement-breakpoint
ALTER TABLE "channels" ADD CONSTRAINT "channels_account_id_pk" PRIMARY KEY("account_id","id");--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_channel_fk" FOREIGN KEY ("account_id","channel_id") REFERENCES "public"."channels"("account_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "responses" ADD CONSTRAINT "responses_channel_fk" FOREIGN KEY ("account_id","channel_id") REFERENCES "public"."channels"("account_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "widget_clients" ADD CONSTRAINT "widget_clients_channel_fk" FOREIGN KEY ("account_id","channel_id") REFERENCES "public"."channels"("account_id","id") ON DELETE no action ON UPDATE no action;