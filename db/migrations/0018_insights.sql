CREATE INDEX "responses_disliked_conversation_idx" ON "responses" USING btree ("conversation_id") WHERE dislikes > 0;--> statement-breakpoint
CREATE INDEX "responses_declined_idx" ON "responses" USING btree ("account_id","created_at","id") WHERE declined;
--> statement-breakpoint
CREATE TABLE "curated_answers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" integer NOT NULL,
	"questions" text[] NOT NULL,
	"answer" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gap_dismissals" (
	"account_id" integer NOT NULL,
	"question" text NOT NULL,
	"dismissed_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "gap_dismissals_account_id_question_pk" PRIMARY KEY("account_id","question")
);
--> statement-breakpoint
ALTER TABLE "curated_answers" ADD CONSTRAINT "curated_answers_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "gap_dismissals" ADD CONSTRAINT "gap_dismissals_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "curated_answers_account_idx" ON "curated_answers" USING btree ("account_id","created_at");
